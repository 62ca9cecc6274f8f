"""The alignment lab: gold files, links from attention, AER, every layer and head scored."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xattn import MultiHeadCrossAttention, ToyEmbedder
from xattn.alignlab import (
    COUNTS,
    MAX_GOLD_BYTES,
    MAX_GOLD_PAIRS,
    METHOD_DESCRIPTIONS,
    METHODS,
    PUBLISHED_AER,
    PUBLISHED_FINDINGS,
    REFERENCE_LABEL,
    GoldFile,
    GoldFileError,
    GoldLinks,
    aer,
    gold_from_pair,
    indexing_warnings,
    link_counts,
    links,
    rates,
    read_gold,
    score_heads,
    toy_examples,
)
from xattn.alignment import alignment_accuracy
from xattn.corpus import align, generate_pairs, translate


def matrix(n_tgt, n_src, pairs):
    """Boolean (n_tgt, n_src) matrix from (src, tgt) pairs."""
    m = np.zeros((n_tgt, n_src), dtype=bool)
    for s, t in pairs:
        m[t, s] = True
    return m


def reference_rates(examples):
    """Och and Ney's AER with plain sets, summed over pairs (as lilt/alignment-scripts)."""
    n_a = n_s = a_s = a_p = 0
    for a, s, p in examples:
        p = p | s
        n_a, n_s, a_s, a_p = n_a + len(a), n_s + len(s), a_s + len(a & s), a_p + len(a & p)
    return (1 - (a_s + a_p) / (n_a + n_s) if n_a + n_s else math.nan,
            a_p / n_a if n_a else math.nan, a_s / n_s if n_s else math.nan)


# ---------------------------------------------------------------- AER by hand
def test_aer_by_hand_with_possible_links():
    # sure S = {0-0, 1-1}; possible adds 2-1; predicted A = {0-0, 2-1, 2-2}
    # |A| = 3, |S| = 2, |A∩S| = 1 (0-0), |A∩P| = 2 (0-0, 2-1)
    # AER = 1 - (1 + 2) / (3 + 2) = 0.4; precision 2/3; recall 1/2
    sure = matrix(3, 3, {(0, 0), (1, 1)})
    possible = matrix(3, 3, {(2, 1)})
    predicted = matrix(3, 3, {(0, 0), (2, 1), (2, 2)})
    counts = link_counts(predicted, sure, possible)
    assert counts.tolist() == [3, 2, 1, 2]
    r = rates(counts)
    assert float(r["aer"]) == pytest.approx(0.4)
    assert float(r["precision"]) == pytest.approx(2 / 3)
    assert float(r["recall"]) == pytest.approx(0.5)
    assert aer(predicted, sure, possible) == pytest.approx(0.4)
    # the possible link alone, not counted as possible: A∩P = A∩S, AER = 1 - 2/5
    assert aer(predicted, sure) == pytest.approx(0.6)


def test_possible_links_never_count_against_but_only_sure_ones_for_recall():
    sure = matrix(2, 2, {(0, 0)})
    possible = matrix(2, 2, {(1, 1)})
    # predicting the possible link too: precision stays 1, recall stays 1, AER 0
    both = matrix(2, 2, {(0, 0), (1, 1)})
    r = rates(link_counts(both, sure, possible))
    assert (float(r["aer"]), float(r["precision"]), float(r["recall"])) == (0.0, 1.0, 1.0)
    # predicting only the possible link: precision 1, recall 0, AER = 1 - 1/2
    r = rates(link_counts(matrix(2, 2, {(1, 1)}), sure, possible))
    assert (float(r["aer"]), float(r["precision"]), float(r["recall"])) == (0.5, 1.0, 0.0)


@pytest.mark.parametrize(("predicted", "sure", "expected"), [
    (set(), {(0, 0)}, (1.0, math.nan, 0.0)),            # nothing predicted: AER 1
    ({(0, 0), (1, 0)}, set(), (0.5, 0.5, math.nan)),      # no sure gold: AER = 1 - precision
    (set(), set(), (math.nan, math.nan, math.nan)),       # nothing at all: undefined
])
def test_empty_links_and_empty_gold_are_defined(predicted, sure, expected):
    possible = {(0, 0)} if not sure and predicted else set()
    r = rates(link_counts(matrix(2, 2, predicted), matrix(2, 2, sure), matrix(2, 2, possible)))
    got = (float(r["aer"]), float(r["precision"]), float(r["recall"]))
    np.testing.assert_array_equal(got, expected)


link_sets = st.sets(st.tuples(st.integers(0, 4), st.integers(0, 3)), max_size=12)


@settings(deadline=None)
@given(link_sets, link_sets, link_sets)
def test_aer_of_gold_is_zero_and_rates_lie_in_0_1(sure, extra, predicted):
    possible = sure | extra
    s, p = matrix(4, 5, sure), matrix(4, 5, possible)
    if sure:
        assert aer(s, s, p) == 0.0              # AER(gold, gold) = 0, with or without P
        assert aer(p, s, p) == 0.0              # predicting every possible link too
    r = rates(link_counts(matrix(4, 5, predicted), s, p))
    for name in ("aer", "precision", "recall"):
        value = float(r[name])
        assert math.isnan(value) or 0 <= value <= 1


@settings(deadline=None)
@given(st.lists(st.tuples(link_sets, link_sets, link_sets), min_size=1, max_size=6))
def test_corpus_rates_are_micro_averaged_like_the_set_reference(pairs):
    total = sum(link_counts(matrix(4, 5, a), matrix(4, 5, s), matrix(4, 5, p))
                for a, s, p in pairs)
    r = rates(total)
    expected = reference_rates([(a, s, p) for a, s, p in pairs])
    np.testing.assert_allclose([r["aer"], r["precision"], r["recall"]], expected)


# ---------------------------------------------------------------- links from attention
W = np.array([[0.1, 0.6, 0.3],        # (n_tgt 4, n_src 3)
              [0.5, 0.2, 0.3],
              [0.2, 0.3, 0.5],
              [0.4, 0.1, 0.5]])


def test_links_both_directions_and_intersection_on_a_hand_made_matrix():
    # rows (target -> source): 0->1, 1->0, 2->2, 3->2
    assert links(W).astype(int).tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1]]
    # columns (source -> target): 0->1 (0.5), 1->0 (0.6), 2->2 (0.5 at rows 2 and 3: first)
    assert links(W, "source_argmax").astype(int).tolist() == [[0, 1, 0], [1, 0, 0],
                                                                [0, 0, 1], [0, 0, 0]]
    assert links(W, "intersection").astype(int).tolist() == [[0, 1, 0], [1, 0, 0],
                                                               [0, 0, 1], [0, 0, 0]]
    assert links(W, "threshold", threshold=0.45).astype(int).tolist() == [
        [0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1]]
    assert links(W, "threshold", threshold=0.3).sum() == 5     # strictly above: no 0.3


def test_links_match_a_plain_loop_on_stacks_and_skip_all_zero_rows():
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(5), size=(2, 3, 4))               # (L 2, H 3, T 4, S 5)
    w[0, 1, 2] = 0.0                                            # a masked query: no link
    got = {m: links(w, m) for m in ("target_argmax", "source_argmax", "intersection")}
    for layer in range(2):
        for head in range(3):
            m = w[layer, head]
            rows = {(int(m[t].argmax()), t) for t in range(4) if m[t].max() > 0}
            cols = {(s, int(m[:, s].argmax())) for s in range(5) if m[:, s].max() > 0}
            for method, expected in (("target_argmax", rows), ("source_argmax", cols),
                                     ("intersection", rows & cols)):
                np.testing.assert_array_equal(got[method][layer, head],
                                              matrix(4, 5, expected))
    assert not got["target_argmax"][0, 1, 2].any()


def test_links_errors():
    with pytest.raises(ValueError, match="method must be one of .* received 'rows'"):
        links(W, "rows")
    with pytest.raises(TypeError, match="threshold must be a number in \\[0, 1\\) .* NoneType"):
        links(W, "threshold")
    with pytest.raises(TypeError, match="threshold must be a number .* bool True"):
        links(W, "threshold", threshold=True)
    with pytest.raises(ValueError, match="threshold must be in \\[0, 1\\); received 1.5"):
        links(W, "threshold", threshold=1.5)
    with pytest.raises(ValueError, match="threshold applies to method='threshold' only"):
        links(W, threshold=0.2)
    with pytest.raises(ValueError, match="shape \\(..., n_tgt, n_src\\); received shape \\(3,\\)"):
        links(W[0])
    with pytest.raises(ValueError, match="finite and >= 0"):
        links(-W)
    with pytest.raises(TypeError, match="predicted must be an array of bool; received dtype"):
        link_counts(W, W > 0.4)
    with pytest.raises(ValueError, match="must agree; received shapes \\(4, 3\\), \\(3, 4\\)"):
        link_counts(W > 0.4, (W > 0.4).T)
    with pytest.raises(ValueError, match="counts must have shape \\(..., 4\\)"):
        rates([1, 2, 3])
    assert set(METHODS) == set(METHOD_DESCRIPTIONS) and len(COUNTS) == 4


# ---------------------------------------------------------------- gold files
def test_pharaoh_sure_possible_order_and_indexing():
    text = "1-1 2?3 3p2\n\n2-1\n"                       # pair 2 has no links
    gold = read_gold(text, format="pharaoh", first_index=1, order="src-tgt")
    assert isinstance(gold, GoldFile) and len(gold) == 3 and gold.n_null == 0
    assert gold.pairs[0] == GoldLinks({(0, 0)}, {(1, 2), (2, 1)})
    assert gold.pairs[0].possible == {(0, 0), (1, 2), (2, 1)}   # P includes S
    assert gold.pairs[1] == GoldLinks() and gold.pairs[2].sure == {(1, 0)}
    swapped = read_gold(text, format="pharaoh", first_index=1, order="tgt-src")
    assert swapped.pairs[2].sure == {(0, 1)}
    zero = read_gold(text, format="pharaoh", first_index=0, order="src-tgt")
    assert zero.pairs[0].sure == {(1, 1)}
    same = read_gold(text.replace("\n", "\r\n").encode("utf-8-sig"), format="pharaoh",
                     first_index=1, order="src-tgt")
    assert same.pairs == gold.pairs


def test_malformed_pharaoh_lines_are_refused_with_their_line_numbers():
    text = "1-1 2-2\n1-x 3\n0-1\n2-2 ١-1\n10000-1\n"
    with pytest.raises(GoldFileError) as info:
        read_gold(text, format="pharaoh", first_index=1, order="src-tgt")
    problems = info.value.problems
    assert [p.split(":")[0] for p in problems] == ["line 2", "line 2", "line 3", "line 4",
                                                   "line 5"]
    assert "'1-x' is not a link; expected i-j (sure) or i?j (possible)" in problems[0]
    assert "'0-1' names position 0, but positions are read as counting from 1" in problems[2]
    assert not any("first_index" in p for p in problems)        # plain words, no argument
    assert "'١-1' is not a link" in problems[3]              # an Arabic-Indic digit
    assert "'10000' is larger than 9999" in problems[4]
    assert str(info.value) == "\n".join(problems)
    assert isinstance(info.value, ValueError)


def test_a_file_of_many_problems_lists_all_and_shows_twenty():
    with pytest.raises(GoldFileError) as info:
        read_gold("x\n" * 500, format="pharaoh", first_index=0, order="src-tgt")
    assert len(info.value.problems) == 500
    shown = str(info.value).split("\n")
    assert len(shown) == 21 and shown[-1] == "... and 480 more problems."
    with pytest.raises(GoldFileError) as info:
        read_gold("x\n" * 21, format="pharaoh", first_index=0, order="src-tgt")
    assert str(info.value).split("\n")[-1] == "... and 1 more problem."


def test_naacl_links_types_confidence_null_and_padding():
    text = ("1 1 1 S\n1 2 3 P 0.8\n1 3 2\n\n"
            "3 1 0 S\n3 2 2 P\n")                 # sentence 2 has no link; 1-0 is NULL
    gold = read_gold(text, format="naacl", first_index=1, order="src-tgt")
    assert len(gold) == 3 and gold.n_null == 1
    assert gold.pairs[0].sure == {(0, 0), (2, 1)}
    assert gold.pairs[0].possible == {(0, 0), (2, 1), (1, 2)}
    assert gold.pairs[1] == GoldLinks()
    assert gold.pairs[2].sure == frozenset() and gold.pairs[2].possible == {(1, 1)}
    padded = read_gold(text, format="naacl", first_index=1, order="src-tgt", n_pairs=5)
    assert len(padded) == 5 and padded.pairs[:3] == gold.pairs
    zero = read_gold("0 0 1 S\n", format="naacl", first_index=0, order="tgt-src")
    assert zero.pairs[0].sure == {(1, 0)} and zero.n_null == 0
    assert any("NULL" in w for w in indexing_warnings(gold))


def test_malformed_naacl_lines_are_refused_with_their_line_numbers():
    text = "1 1 1 S\n1 1\n1 a 2 S\n1 2 2 X\n1 2 2 S high\n0 1 1 S\n4 1 1 S\n"
    with pytest.raises(GoldFileError) as info:
        read_gold(text, format="naacl", first_index=1, order="src-tgt", n_pairs=3)
    problems = info.value.problems
    assert [p.split(":")[0] for p in problems] == [f"line {n}" for n in range(2, 8)]
    assert "expected 'sentence source target [S|P] [confidence]'; received 2" in problems[0]
    assert "'a' is not a whole number" in problems[1]
    assert "the link type must be S or P; received 'X'" in problems[2]
    assert "the confidence must be a number; received 'high'" in problems[3]
    assert "sentence 0 does not exist: sentence numbers count from 1" in problems[4]
    assert "sentence 4 is past the last of 3 sentence pairs" in problems[5]


def test_input_bounds_and_argument_errors():
    with pytest.raises(GoldFileError, match="at most 2,000,000 bytes; received 2,000,001"):
        read_gold(b"0" * (MAX_GOLD_BYTES + 1), format="pharaoh", first_index=0,
                  order="src-tgt")
    with pytest.raises(GoldFileError, match="at most 10,000 lines"):
        read_gold("\n" * (MAX_GOLD_PAIRS + 1), format="pharaoh", first_index=0,
                  order="src-tgt")
    with pytest.raises(GoldFileError, match="UTF-8 text; byte 4 is 0xff"):
        read_gold(b"0-0 \xff", format="pharaoh", first_index=0, order="src-tgt")
    kwargs = dict(format="pharaoh", first_index=0, order="src-tgt")
    with pytest.raises(TypeError, match="first_index must be an int; received bool True"):
        read_gold("0-0", **{**kwargs, "first_index": True})
    with pytest.raises(ValueError, match="first_index must be an int >= 0 and <= 1; received 2"):
        read_gold("0-0", **{**kwargs, "first_index": 2})
    with pytest.raises(ValueError, match="format must be one of \\('pharaoh', 'naacl'\\)"):
        read_gold("0-0", **{**kwargs, "format": "talp"})
    with pytest.raises(ValueError, match="order must be one of \\('src-tgt', 'tgt-src'\\)"):
        read_gold("0-0", **{**kwargs, "order": "s-t"})
    with pytest.raises(ValueError, match="n_pairs applies to NAACL files only"):
        read_gold("0-0", **kwargs, n_pairs=3)
    with pytest.raises(TypeError, match="data must be str or bytes"):
        read_gold(["0-0"], **kwargs)
    with pytest.raises(TypeError, match="first_index"):
        read_gold("0-0", format="pharaoh", order="src-tgt")     # no default: say it


def test_gold_links_matrices_and_errors():
    sure, possible = GoldLinks({(2, 0)}, {(0, 1)}).matrices(2, 3)
    assert sure.tolist() == [[False, False, True], [False, False, False]]
    assert possible.tolist() == [[False, False, True], [True, False, False]]
    with pytest.raises(ValueError, match="inside 2 source x 2 target words .* 1 outside: "
                                         "2-0. Was a one-based file read as counting from 0"):
        GoldLinks({(2, 0)}).matrices(2, 2)
    with pytest.raises(TypeError, match="sure must hold \\(src, tgt\\) pairs of ints"):
        GoldLinks({(1, 2, 3)})
    with pytest.raises(TypeError, match="sure must be a set of \\(src, tgt\\) pairs of ints; "
                                        "received str '0-0'"):
        GoldLinks("0-0")
    with pytest.raises(ValueError, match="possible src must be an int >= 0; received -1"):
        GoldLinks(possible={(-1, 0)})


# ---------------------------------------------------------------- the one-based trap
def test_one_based_gold_read_as_zero_based_is_caught():
    # "le chat rouge dort" for "the red cat sleeps": gold 1-1 2-3 3-2 4-4, one-based
    pair = translate("the red cat sleeps")
    text = "1-1 2-3 3-2 4-4\n"
    right = read_gold(text, format="pharaoh", first_index=1, order="src-tgt")
    assert right.pairs[0] == gold_from_pair(pair)
    assert indexing_warnings(right, [(4, 4)]) == []
    w = pair.alignment_matrix()[None, None] * 1.0                  # (1, 1, 4, 4): a perfect head
    assert score_heads([(w, right.pairs[0])]).aer[0, 0] == 0.0
    wrong = read_gold(text, format="pharaoh", first_index=0, order="src-tgt")
    warnings = indexing_warnings(wrong, [(4, 4)])
    assert warnings[0].startswith("1 gold link points past the end of its sentence (the "
                                  "first: pair 1, source word 5 of 4, target word 5 of 4)")
    assert "Read its positions as counting from 1" in warnings[0]
    assert "No link uses the first source or target word in 4 links" in warnings[1]
    assert not any("first_index" in w for w in warnings)
    with pytest.raises(ValueError, match="examples\\[0\\]: gold links must lie inside 4 source "
                                         "x 4 target words"):
        score_heads([(w, wrong.pairs[0])])


def test_indexing_warnings_for_zero_based_gold_read_as_one_based():
    # zero-based gold without a link to position 0 on either side cannot be read one-based
    # at all; one whose first words are linked is refused ("names position 0"); a file that
    # never links the last word read one-based gets a warning
    gold = read_gold("1-1 2-2\n", format="pharaoh", first_index=1, order="src-tgt")
    assert indexing_warnings(gold, [(3, 3)]) == [
        "No link uses the last source or target word of any sentence in 2 links. Is the "
        "file zero-based? Read its positions as counting from 0."]
    assert indexing_warnings(gold) == []
    one = read_gold("1-1\n", format="pharaoh", first_index=1, order="src-tgt")
    assert "word of any sentence in 1 link." in indexing_warnings(one, [(2, 2)])[0]
    with pytest.raises(ValueError, match="shapes must give one \\(n_tgt, n_src\\) per gold "
                                         "pair \\(1\\); received 2"):
        indexing_warnings(gold, [(3, 3), (2, 2)])
    with pytest.raises(TypeError, match="gold must be a GoldFile"):
        indexing_warnings([GoldLinks()])


# ---------------------------------------------------------------- every layer and head
def test_score_heads_by_hand():
    pair = translate("the red cat sleeps")                          # gold 0, 2, 1, 3
    gold = pair.alignment_matrix() * 1.0
    w = np.stack([np.stack([gold, np.eye(4)]),                        # layer 0: gold, diagonal
                  np.stack([np.eye(4), np.eye(4)])])                  # layer 1: diagonals
    s = score_heads([(w, pair)])
    # the diagonal has 2 of 4 links right: AER = 1 - (2 + 2) / (4 + 4) = 0.5
    np.testing.assert_allclose(s.aer, [[0.0, 0.5], [0.5, 0.5]])
    np.testing.assert_allclose(s.precision, [[1.0, 0.5], [0.5, 0.5]])
    # layer 0's average is 1 at le-the and sleeps, 0.5 elsewhere: its rows' argmaxes go to
    # the first 0.5 (rouge -> red, chat -> red): 3 of 4 right
    np.testing.assert_allclose(s.layer_aer, [0.25, 0.5])
    assert s.best_layer == 0 and s.best_head == (0, 0) and s.n_pairs == 1
    assert s.counts.tolist()[0][0] == [4, 4, 4, 4]
    assert "best_layer=0" in repr(s)


def test_score_heads_sums_counts_over_pairs_of_any_shape_like_the_reference():
    rng = np.random.default_rng(4)
    pairs = generate_pairs(30, seed=2)
    examples = [(rng.dirichlet(np.ones(len(p.source)), size=(2, 3, len(p.target))), p)
                for p in pairs]                                       # (L 2, H 3, T, S)
    for method, threshold in (("target_argmax", None), ("intersection", None),
                              ("threshold", 0.3)):
        s = score_heads(examples, method=method, threshold=threshold)
        for layer in range(2):
            for head in range(4):                                     # head 3: the average
                sets = []
                for w, p in examples:
                    m = w[layer].mean(axis=0) if head == 3 else w[layer, head]
                    a = links(m, method, threshold=threshold)
                    g = {(s_, t) for t, s_ in enumerate(p.alignment)}
                    sets.append(({(int(j), int(i)) for i, j in zip(*np.nonzero(a),
                                                                     strict=True)}, g, g))
                expected = reference_rates(sets)
                got = (s.layer_aer[layer], s.layer_precision[layer], s.layer_recall[layer]) \
                    if head == 3 else (s.aer[layer, head], s.precision[layer, head],
                                       s.recall[layer, head])
                np.testing.assert_allclose(got, expected)


def test_extra_columns_count_against_precision_and_three_axis_weights_are_one_layer():
    pair = translate("a cow runs")
    w = np.zeros((2, 3, 4))                                          # (H, T, S + </s>)
    w[0, :, :3] = pair.alignment_matrix()
    w[1, :, 3] = 1.0                                                 # head 1: all on </s>
    s = score_heads([(w, gold_from_pair(pair))])
    assert s.aer.shape == (1, 2)
    assert s.aer[0].tolist() == [0.0, 1.0] and s.precision[0, 1] == 0.0


def test_toy_trained_model_aer_is_one_minus_its_exact_accuracy(trained):
    # target_argmax gives one link a word and the toy gold one sure link a word, so
    # AER = 1 - 2|A∩S| / 2n = 1 - exact accuracy of the head-averaged argmax
    pairs = trained.heldout[:64]
    s = score_heads(toy_examples(trained.model, trained.embedder, pairs))
    exact = alignment_accuracy(trained.model, trained.embedder, pairs, exact=True)
    assert s.layer_aer[0] == pytest.approx(1 - exact)
    assert s.aer.shape == (1, 4) and s.best_layer == 0
    assert s.aer.min() < 0.1 and s.layer_aer[0] < 0.1


def test_unaligned_words_of_typed_pairs_give_no_gold_link():
    pair = align("the dog sleeps", "le chien rouge dort")           # rouge: unaligned
    assert gold_from_pair(pair).sure == {(0, 0), (1, 1), (2, 3)}
    ex = toy_examples(MultiHeadCrossAttention(8, 2), ToyEmbedder(8), [pair])
    assert ex[0][0].shape == (1, 2, 4, 3)
    assert score_heads(ex).counts[0, 0, 1] == 3                     # |S| = 3


def test_score_heads_errors():
    pair = translate("a cow runs")
    w = np.full((1, 2, 3, 3), 1 / 3)
    with pytest.raises(ValueError, match="examples must hold at least one"):
        score_heads([])
    with pytest.raises(TypeError, match="examples must be a sequence of \\(weights, gold\\)"):
        score_heads(x for x in [(w, pair)])
    with pytest.raises(TypeError, match="examples\\[0\\] must be a pair \\(weights, gold\\)"):
        score_heads([w])
    with pytest.raises(TypeError, match="examples\\[0\\]: gold must be a GoldLinks or a "
                                        "SentencePair; received set"):
        score_heads([(w, {(0, 0)})])
    with pytest.raises(ValueError, match="examples\\[1\\]: weights must have shape \\(1, 2, "
                                         "n_tgt, n_src\\) like examples\\[0\\]; received "
                                         "shape \\(1, 3, 3, 3\\)"):
        score_heads([(w, pair), (np.full((1, 3, 3, 3), 1 / 3), pair)])
    with pytest.raises(ValueError, match="received shape \\(3, 3\\)"):
        score_heads([(w[0, 0], pair)])
    with pytest.raises(ValueError, match="method must be one of"):
        score_heads([(w, pair)], method="union")
    with pytest.raises(TypeError, match="model must be a MultiHeadCrossAttention"):
        toy_examples("model", ToyEmbedder(8), [pair])


def test_no_defined_aer_gives_no_best_layer():
    s = score_heads([(np.zeros((2, 1, 2, 2)), GoldLinks())])
    assert np.isnan(s.aer).all() and s.best_layer == -1 and s.best_head == (-1, -1)


# ---------------------------------------------------------------- published references
def test_published_references_are_labelled_data_with_sources():
    assert "not measured by this page" in REFERENCE_LABEL
    assert len({(r.system, r.test_set) for r in PUBLISHED_AER}) == len(PUBLISHED_AER)
    assert all(0 < r.aer < 100 and r.citation for r in PUBLISHED_AER)
    table2 = {(r.system, r.test_set): r.aer for r in PUBLISHED_AER if "Table 2" in r.citation}
    assert table2[("awesome-align", "De-En")] == 15.3 and len(table2) == 15
    assert any("penultimate" in f.claim and f.citation.startswith("Garg et al. 2019")
               for f in PUBLISHED_FINDINGS)
