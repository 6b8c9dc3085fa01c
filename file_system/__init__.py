"""Files by path: local paths through Python, remote ones (gs://...) through tf.io.gfile.

So that tools which only read and write files (create_pretraining_data.py)
never import TensorFlow for local paths: importing it costs ~5 s and ~0.5 GB.
"""

from file_system.files import (content_hash, errors, exists, glob, is_remote, isdir, open_file, reason, remove, rename,
                               size)
