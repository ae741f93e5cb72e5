"""Process tests: what needs other processes — concurrent writers, kill -9, editors racing
memcli, fresh interpreters (import cost, a fresh shell), git, the installers."""
