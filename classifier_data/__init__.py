"""The data side of run_classifier: GLUE/XNLI examples, features, metrics, outputs.

  processors: InputExample, DataProcessor, the task processors,
              PROCESSORS and get_processor(task_name).
  features:   InputFeatures, convert_single_example,
              convert_examples_to_features, the TFRecord writer and reader.
  metrics:    task_metrics(task_name, predictions, labels).
  submission: test_results.tsv and the GLUE leaderboard files.
"""
