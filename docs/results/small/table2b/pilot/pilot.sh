#!/bin/bash
# Table 2B small: the learning rate and warm-up chosen on the standard row (dp64, d_p = d/h = 16) alone, seed 1.
# Usage: pilot.sh LR WARMUP STEPS
cd /work/main
LR=$1; W=$2; N=$3
O=/work/runs/table2b_pilot/lr${LR}_w${W}_n${N}
/work/main/.venv/bin/python run_pretraining.py --input_file=/work/runs/table2b_small/data/pretrain_32.tfrecord \
  --output_dir=$O --bert_config_file=/work/runs/table2b_small/configs/dp64.json --do_train=true --do_eval=true \
  --train_batch_size=64 --max_seq_length=32 --max_predictions_per_seq=5 --num_train_steps=$N --num_warmup_steps=$W \
  --learning_rate=$LR --save_checkpoints_steps=500 --max_eval_steps=100 --random_seed=1 --dtype=float32 \
  --eval_input_file=/work/runs/table2b_small/data/heldout.tfrecord --eval_batch_size=32 > $O.log 2>&1
