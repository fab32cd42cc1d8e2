def later(x):
    y = x * 5
    return y


print("later", later(2))
