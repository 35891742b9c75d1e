print("Hello World!")
print("<hr>")  # markdown-exec: hide
