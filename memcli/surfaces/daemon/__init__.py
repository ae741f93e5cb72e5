"""`memcli watch`: the watcher, and the daemon that serves the fast path."""
