"""A guided lesson: from one head to which layer of a real translator aligns words, each
head's job, whether attention explains what the model needs, and the class aligning words
against the heads.

Each `Step` puts the page in a prepared state (its URL parameters: sentences, weights, heads,
mask, view), says one short paragraph, names one thing to look at and asks the class one
question, which the class first answers with a prediction (predict, then see: Crouch et al.
2004). Everything a step says about the numbers comes from the weights on screen
(``Step.tell``), never written by hand, so it stays true whatever the sentences or the seed;
a step whose «fields» name a word the sentence does not have says what it asks instead.

Each step declares what it ``needs`` of the weights (a seed to change, a mask to lift,
projections to switch heads off, ...). Weights that cannot give it (a file has no projections,
trained weights no seed) get one line saying what the step shows instead (`missing`), never an
error; above the step's paragraph, `off_plan` says that the paragraph describes the step's own
weights, not the ones drawn. Answers are Markdown in which every token is a code span
(``xattn.literal.md_code``).
"""

from xattn.lesson import _aligns, tell
from xattn.lesson import _probe as probe
from xattn.lesson._aligns import Versus, versus, word_pair
from xattn.lesson._step import (
    NEEDS,
    Step,
    is_right,
    missing,
    off_plan,
    verdict,
)
from xattn.lesson._told import Part, Told

__all__ = ["Step", "Told", "Part", "STEPS", "NEEDS", "missing", "off_plan", "verdict",
           "is_right", "Versus", "versus", "word_pair"]

STEPS: tuple[Step, ...] = (
    Step("One head and the formula", {"heads": 1, "view": "Heads"},
         "Each **row** is a target token (the decoder's query); each **column** a source token "
         "(the encoder's key). A cell says how much that target token looks at that source "
         "token: $\\mathrm{softmax}(q_i \\cdot k_j / \\sqrt{d_\\text{head}})$.",
         "The row of «target» in «heatmap».",
         "Which source word does «target» look at most in «head», and with what weight?",
         tell.one_head),
    Step("Every row sums to 1", {"view": "Heads"},
         "With «heads», each head has its own projections and its own heatmap. The softmax "
         "turns a row of scores into weights that share one unit of attention.",
         "Hover the cells of one row: the weight is shown to three decimals.",
         "Add up the row of «target» in «head». What do you get, and why?", tell.rows_sum),
    Step("Masking: hide a source token", {"mask": "padding", "pad": ("6: mat",),
                                         "view": "Heads"},
         "A padding mask (the `-∞` in M) hides source tokens, e.g. the filler of a batch. A "
         "hidden token gets weight exactly 0, marked with a grey cross.",
         "The column of «masked», and the other cells of each row.",
         "What weight does «masked» get now, and where did its share go?", tell.padding,
         needs=("mask", "unmasked")),
    Step("Masking: wait-k", {"mask": "wait-k", "k": 2, "view": "Heads"},
         "Simultaneous translation starts before the sentence ends: with *wait-k*, target "
         "token *i* sees only the first *i + k* source tokens.",
         "The staircase of grey crosses, top right.",
         "Which source tokens may the first target token see? And the last one?", tell.wait_k,
         needs=("mask",)),
    Step("Many heads, random weights", {"heads": 8, "view": "Heads"},
         "With «heads»: as many different patterns. But nothing here was trained: the "
         "projection matrices come from the seed.",
         "The heatmaps; then change the seed in the sidebar from «seed» to «next».",
         "Change the seed from «seed» to «next». Do the patterns stay?", tell.seed,
         needs=("variant",)),
    Step("Trained heads align words", {"weights": "trained", "view": "Heads"},
         "The same module trained on a toy English→French task: each French word must find the "
         "English word it translates (◻ marks it). French moves the adjective after the "
         "noun, and *le* appears twice.",
         "The rows of *le* and the ◻ gold marks.",
         "Which English word does each *le* look at, in each head?", tell.trained,
         needs=("gold",)),
    Step("Training made the patterns", {"weights": "trained", "view": "Compare",
                                        "cmp": "untrained"},
         "A is the trained module, B the very same module before its first training step: "
         "same words, same vectors, same heads. Only training separates them.",
         "The two sets of heatmaps, side by side.",
         "Which picture gives each French word one clear English word, and why?",
         tell.training, needs=("untrained",)),
    Step("Switch heads off: which matter?", {"weights": "trained",
                                            "view": "Switch heads off"},
         "Multiply one head's output by 0 before $W^O$ and measure how much the output "
         "changes: a head whose removal changes little was not needed.",
         "The table, sorted by importance.",
         "Which head's removal changes the output most, and which least?", tell.ablation,
         needs=("ablate",)),
    Step("Why divide by √d_head?", {"d_model": 256, "heads": 2, "view": "Step through"},
         "Each head works in d_head = d_model / h dimensions; here «d_head». Dot products of "
         "such vectors grow like √d_head, so the scores are divided by it before the softmax.",
         "The *Entropy of this row* with *Divide scores by √d_head* on, then off.",
         "Switch the division off. How does the entropy of the first row change?",
         tell.sqrt, needs=("rescale",)),
    Step("Which layer aligns?", {"weights": "model", "view": "Alignment"},
         "A real translation model, trained here on the toy task and run in NumPy: «layers» "
         "decoder layers of «heads» each. Nobody told it to align words; the alignment "
         "lab scores each layer against the gold alignment of «n» held-out sentences.",
         "The *average* column of the AER chart (lower is better).",
         "Which layer's heads, averaged, align words best?", tell.layers, needs=("heldout",)),
    Step("Watching heads learn", {"weights": "trained", "view": "Training"},
         "The toy module's training in twenty snapshots. Moved words (the swapped noun and "
         "adjective) are found by meaning, repeated words (the right *the* of two) by "
         "position.",
         "The slider from step 0 to the end, and the per-head curves below.",
         "When does each head start aligning, and by meaning or by position?", tell.learning,
         needs=("timelapse",)),
    Step("Guess each head's job", {"weights": "model", "view": "Heads", "layer": 2},
         "Trained heads specialise: some **follow position**, some **align words**, some are "
         "**sinks** (parked on `</s>` or punctuation), some are **spread out**.",
         "The heads of «layer».",
         "What is the job of each of «heads» of «layer»?", probe.jobs),
    Step("Is attention the explanation?", {"weights": "model", "view": "Decode", "dstep": 1},
         "A head's weight says where it looked, not what the output needed. Test it: mask one "
         "source word from the cross-attention (every layer) and measure how much the "
         "probability of «target» falls. Switch each head off too.",
         "This step's rows in every layer and head, and each layer's guess.",
         "Which source word, masked from the cross-attention, will change «target» most?",
         probe.explanation, needs=("effects",)),
    Step("The class aligns",
         {"weights": "model", "view": "Heads", "src": "the sick king hears the dog",
          "tgt": "le roi malade entend le chien"},
         "Align the words yourself, before seeing any weights; then the class's links are "
         "scored against gold beside every layer and head («heads»).",
         "After the reveal, the class's links beside each head's.",
         "Which source word does each target word translate?", _aligns.aligns,
         needs=("pair_gold",)),
)
