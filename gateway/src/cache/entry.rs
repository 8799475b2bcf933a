//! An entry as it is kept: a small binary envelope (`PWC1`, when it was stored, whether it is a
//! stream) around the body the client was sent.
