#!/usr/bin/env python3
"""Plays an asciicast v2 recording's output to its terminal, quickly, up to the first marker named
STOP (a real agent's screen at that moment), then holds it: keys typed into it change nothing.

    play_cast.py FILE STOP
"""
import json
import os
import sys
import time


def main():
    path, stop = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        f.readline()  # the header
        last = 0.0
        for line in f:
            t, kind, data = json.loads(line)
            if kind == "m" and data == stop:
                break
            if kind != "o":
                continue
            time.sleep(min(max(t - last, 0.0), 0.02))
            last = t
            sys.stdout.write(data)
            sys.stdout.flush()
    while os.read(sys.stdin.fileno(), 4096):
        pass


if __name__ == "__main__":
    main()
