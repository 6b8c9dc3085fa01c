"""The one owner of checkpoints, for every model family.

A model's variables under their original-layout names (`original_names.py`),
drawn by (seed, name) (`seeded_init.py`), read and written as TF1 checkpoint
files in that layout, frozen groups as a seed manifest (`tf1_checkpoint.py`),
`--init_checkpoint` checked and loaded (`init_checkpoint.py`), and a training
run's checkpoints with the optimizer and input state beside them
(`training_checkpoint.py`). It imports no family: a family's model names its
own variables (`checkpoint_variables()`) and says how each is drawn
(`initializer_of(name)`).
"""
