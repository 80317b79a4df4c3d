"""GPU sessions: the per-thread GPU objects, timers and memory readings of each GPU library.

Nothing here imports a GPU library at module level; each session module is
imported only when a sweep on its backend starts.
"""
