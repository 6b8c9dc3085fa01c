"""Shard grouping, seeds and the compact shard form."""

import random

import numpy as np

from pretraining_data import shards


def test_groups_of_documents_per_shard_with_a_short_tail_merged():
    def sizes(num_documents, per_shard):
        return [len(g) for g in shards.group_documents(range(num_documents), per_shard)]

    assert sizes(100, 10) == [10] * 10
    assert sizes(104, 10) == [10] * 9 + [14]  # 4 < 5: merged into the last shard.
    assert sizes(105, 10) == [10] * 10 + [5]
    assert sizes(7, 10) == [7]
    assert sizes(0, 10) == []
    assert sizes(3, 1) == [1, 1, 1]
    # Order is kept.
    assert [d for g in shards.group_documents(range(104), 10) for d in g] == list(range(104))


def test_shards_also_end_at_a_number_of_characters():
    documents = [["x" * 10, "y" * 10]] * 50  # 20 characters each.
    groups = list(shards.group_documents(documents, 1000, max_characters=100))
    assert [len(g) for g in groups] == [5] * 10
    # A tail under half of both limits is merged; one over half is not.
    assert [len(g) for g in shards.group_documents(documents[:47], 1000, 100)] == [5] * 8 + [7]
    assert [len(g) for g in shards.group_documents(documents[:48], 1000, 100)] == [5] * 9 + [3]
    # The document limit still applies.
    assert [len(g) for g in shards.group_documents(documents, 4, 10**6)] == [4] * 12 + [2]


def test_characters_per_shard_follows_the_input_within_bounds():
    assert shards.characters_per_shard(1000) == 1 << 16
    assert shards.characters_per_shard(1 << 20) == 1 << 16
    assert shards.characters_per_shard(3 << 19) == 3 << 15
    assert shards.characters_per_shard(10 << 30) == 1 << 17


def test_shard_zero_keeps_the_seed_and_others_differ():
    assert shards.shard_seed(12345, 0) == 12345
    seeds = {shards.shard_seed(s, i) for s in (0, 1, 12345) for i in range(100)}
    assert len(seeds) == 300
    streams = {random.Random(shards.shard_seed(12345, i)).random() for i in range(100)}
    assert len(streams) == 100


def test_documents_drop_empty_lines_and_documents():
    shard = shards.Shard(
        index=0,
        token_ids=np.array([5, 6, 7, 8, 9], np.int32),
        line_lengths=np.array([2, 0, 1, 0, 2], np.int32),
        document_lengths=np.array([3, 1, 1], np.int32))
    assert shard.documents() == [[[5, 6], [7]], [[8, 9]]]
    table = ["v%d" % i for i in range(10)]
    assert shard.documents(table) == [[["v5", "v6"], ["v7"]], [["v8", "v9"]]]
