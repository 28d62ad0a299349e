"""A tiny module to review: it works, but a careful reviewer will find things to say."""


def greet(name, times=1):
    message = "Hello, " + name + "!"
    result = ""
    for i in range(0, times):
        result = result + message + "\n"
    return result


def average(numbers):
    return sum(numbers) / len(numbers)


if __name__ == "__main__":
    print(greet("MCP", 2))
    print(average([]))
