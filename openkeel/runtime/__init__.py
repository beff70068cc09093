"""What every role runs on besides its adapters: the clock (injectable, so tests control time)
and the periodic-task runner. Imports nothing of the roles; below them, beside rpc and db."""
