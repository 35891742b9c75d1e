"""Running or reusing what the pages execute: every ``python exec`` block, markdown-exec session
and notebook, under limits, each output reused from the execution cache or run. ARCHITECTURE.md's
table of ``execution/`` names the module that owns each step of a block's life."""
