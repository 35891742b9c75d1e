"""``python -m examples``: print the practice's 9 output lines, computed live."""

from .practice import practice_lines

for line in practice_lines():
    print(line)
