# Model2Vec distillation of the teacher into one vector per token
# (Tulkens and van Dongen, 2024). internal/gen runs this in a virtual
# environment holding requirements.txt; it reads the token ids gen's Go
# tokeniser wrote and writes little-endian float32 rows, one per token.
#
#   python distill.py MODEL.onnx VOCAB_SIZE OUT.f32
import sys

import numpy as np
import onnxruntime as ort

DIMS = 256      # PCA dimensions, Model2Vec's default
SIF = 1e-4      # a in the SIF weight a/(a+p), Model2Vec's default
CLS, SEP = 101, 102


def token_vectors(session, n):
    """Each token alone between [CLS] and [SEP], mean-pooled over the
    three positions as the teacher pools a sentence."""
    out = np.zeros((n, 384), dtype=np.float64)
    for start in range(0, n, 1024):
        ids = np.array([[CLS, t, SEP] for t in range(start, min(n, start + 1024))], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, feeds)[0]
        out[start:start + len(ids)] = hidden.mean(axis=1)
    return out


def main():
    model, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    opts = ort.SessionOptions()
    # One thread and a fixed order of work keep the output repeatable.
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    e = token_vectors(session, n)
    e -= e.mean(axis=0)
    _, _, vt = np.linalg.svd(e, full_matrices=False)
    e = e @ vt[:DIMS].T
    # The sign of a principal component is arbitrary; fix it so a rerun
    # on another machine gives the same file.
    e *= np.sign(e.sum(axis=0) + 1e-12)
    # Zipf's law from the vocabulary's order, as Model2Vec estimates p.
    inv_rank = 1 / np.arange(2, n + 2)
    p = inv_rank / inv_rank.sum()
    e *= (SIF / (SIF + p))[:, None]
    e.astype("<f4").tofile(out)


if __name__ == "__main__":
    main()
