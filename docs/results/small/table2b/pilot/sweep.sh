#!/bin/bash
# The pilot sweep: 4000 steps (400 warm-up, 10%) at three peak learning rates, one after the other.
for LR in 0.001 0.002 0.0005; do /work/runs/table2b_pilot/pilot.sh $LR 400 4000; done
