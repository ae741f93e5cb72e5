"""Pure algorithms over entries and arrays: ranking, inject packing, compress, reflect, extract."""
