#!/usr/bin/env python3
"""fragload.py SEED SIZE LOAD DEL: a fragmenting redis workload as two RESP
files for redis-cli --pipe: 200,000 SETs (values of SIZE bytes, or with
SIZE "mixed" most between 8 and 400 bytes in many small classes and 2 % up
to 12 KiB), then DELs of 80 % of the keys, chosen at random. The seed
makes the run repeatable; the doctor's and the fragmentation tests share
it so that both fragment redis the same way."""
import random
import sys

seed, size, load, dele = sys.argv[1:5]
random.seed(int(seed))
n = 200000


def cmd(*args):
    out = "*%d\r\n" % len(args)
    for a in args:
        out += "$%d\r\n%s\r\n" % (len(a), a)
    return out


def value_size():
    if size != "mixed":
        return int(size)
    if random.random() < 0.02:
        return random.randint(1, 12288)
    return random.randint(8, 400)


with open(load, "w") as f:
    for i in range(n):
        f.write(cmd("SET", "k%d" % i, "v" * value_size()))
keys = list(range(n))
random.shuffle(keys)
with open(dele, "w") as f:
    for i in keys[: n * 8 // 10]:
        f.write(cmd("DEL", "k%d" % i))
