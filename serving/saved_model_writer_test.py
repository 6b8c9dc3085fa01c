"""Versioned SavedModel directories as TF Serving reads them."""

import logging

import pytest
import tensorflow as tf

from serving import saved_model_writer


class _Doubler(tf.Module):

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def serving_default(self, x):
        return {"y": 2 * x}


def test_versions_count_up_and_are_never_overwritten(tmp_path):
    export_dir = str(tmp_path / "export")
    module = _Doubler()
    signatures = {"serving_default": module.serving_default}
    assert saved_model_writer.versions(export_dir) == []
    first = saved_model_writer.save(module, export_dir, signatures)
    assert first == str(tmp_path / "export" / "1")
    (tmp_path / "export" / "notes").mkdir()  # not a version
    assert saved_model_writer.save(module, export_dir, signatures, version=7).endswith("/7")
    assert saved_model_writer.save(module, export_dir, signatures).endswith("/8")
    assert saved_model_writer.versions(export_dir) == [1, 7, 8]
    assert sorted(p.name for p in (tmp_path / "export").iterdir()) == ["1", "7", "8", "notes"]  # no temporary left
    loaded = tf.saved_model.load(first)
    assert loaded.signatures["serving_default"](x=tf.constant([1.5]))["y"].numpy().tolist() == [3.0]
    with pytest.raises(ValueError, match=r"export/7 exists already: TF Serving versions are never overwritten"):
        saved_model_writer.save(module, export_dir, signatures, version=7)


def test_saving_leaves_info_logging_on(tmp_path, caplog):
    module = _Doubler()
    with caplog.at_level(logging.INFO):
        saved_model_writer.save(module, str(tmp_path), {"serving_default": module.serving_default})
    assert "Exported SavedModel to %s (signatures: serving_default)." % (tmp_path / "1") in caplog.text
