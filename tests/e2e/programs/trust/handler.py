def handle(n):
    answer = n * 2  # handler breakpoint here
    return answer
