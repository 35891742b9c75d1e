"""Running or reusing what the pages execute: every executed block and markdown-exec session,
in a worker under limits, each output reused from the execution cache or run. ARCHITECTURE.md's
table of ``execution/`` names the module that owns each step of a block's life."""
