"""Use cases over the store and the index, shared by every surface; Memory is their facade."""
