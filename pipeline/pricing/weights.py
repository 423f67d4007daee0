"""Weight inventories: every tensor a layer kind (or a model, a tower, an MTP layer) holds, as data.

An op profile states, per layer kind, the weight tensors one layer of the kind
holds, each as one entry of ``weights``::

    - {role: q_proj, name: self_attn.q_proj.weight, part: attention,
       shape: [num_attention_heads * head_dim, hidden_size], bias: qkv_bias}

- ``role``: what the tensor does, in the project's vocabulary (``q_proj``,
  ``router``, ``expert.gate_up_proj``), the same across families;
- ``name``: the parameter's name in the family's transformers modelling code
  (relative to the layer, the tower or the model), so that an inventory can
  be compared tensor by tensor with the reference implementation;
- ``shape``: its dimensions, each an integer expression over the spec's
  fields (:data:`SYMBOLS`): ``+ - * //`` and parentheses, nothing else;
- ``part``: the bucket it is counted in (:data:`PARTS`);
- ``per``: ``layer`` (the default), ``expert`` (once per routed expert: the
  shape is one expert's, and ``num_experts`` of it are held) or
  ``first_layer`` (held only by the first layer of a run of the kind, as T5's
  relative-attention bias table);
- ``copies``: a count of the spec (a tower's ``num_deepstack_mergers``, a
  layer's ``num_attention_heads``): the tensor is held that many times, ``{i}``
  in its name standing for each copy's index
  (``deepstack_merger_list.{i}.norm.weight``, StableLM's per-head
  ``self_attn.q_layernorm.norms.{i}.weight``), 0 copies holding none;
- ``stacked``: how the reference holds a routed expert's tensors, ``leading``
  (the default: one ``[num_experts, ...]`` tensor) or ``rows`` (the experts'
  slices concatenated along the first dimension, DBRX's ``w1`` of
  ``[num_experts * ffn_hidden_size, d_model]``); it names the reference's
  tensor and changes no count;
- ``when``: a flag or count of the spec that must be true (``qk_norm``) or,
  with ``not``, false (``not tie_word_embeddings``) for the tensor to exist;
- ``bias``: likewise, for a bias of the tensor's first dimension
  (``nn.Linear(in, out, bias=...)`` holds ``[out]``); ``true`` when the code
  always builds one;
- ``op``: ``matmul`` for a weight a forward pass multiplies each token by
  (the default for two dimensions), ``lookup`` for a table it indexes
  (embeddings, position and relative-bias tables), ``elementwise`` for the
  rest (norms, biases, convolutions, scalars per head: the default for other
  shapes). The FLOP count reads it.

Expressions are compiled once, when a profile loads; a name outside
:data:`SYMBOLS` is refused there, and so is any dimension that is not a
whole number at least 0 below 2^63 for every spec the profile accepts
(:func:`dimension_problem`): the grammar is names, whole numbers, ``+ - *
//`` and parentheses, at most :data:`MAX_EXPRESSION_CHARS` characters and
:data:`MAX_NESTING` operations deep, no unary minus; a subtraction must be
provably at least 0 and a divisor provably above 0 from the least and largest
value each field can take (:func:`symbol_range`), and a dimension of whole
numbers and flags alone at most :data:`MAX_SIZE`. A dimension over fields
can still grow past :data:`MAX_SIZE` with the spec's values: resolving it
then raises :class:`Unpriced` (no model holds that), so no count is ever an
integer too long to print. Resolving an inventory against a spec
(:func:`resolve`) raises :class:`Unpriced` naming the field a shape or a
condition needs and the spec leaves out: absent is not zero.
"""

from __future__ import annotations

import ast
import functools
import math
from dataclasses import dataclass
from types import CodeType, MappingProxyType
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from pipeline.spec.problems import FieldPath

#: The buckets a tensor is counted in. A layer's ``attention`` is its token mixer with the mixer's own norms
#: (``q_norm``, MLA's ``kv_a_layernorm``, DeltaNet's gated norm); ``norms`` the layer's own norms; the rest split
#: the feed-forward (``mlp`` is a dense MLP's, the others a MoE block's). Model-level parts: ``embedding``,
#: ``position`` (learned position and token-type tables), ``final_norm``, ``head``, ``other`` (what fits none of
#: them: RoBERTa's masked-LM head transform); a tower's: ``tower`` and ``projector``;
#: an MTP layer's own extras: ``mtp``.
LAYER_PARTS = ("attention", "norms", "mlp", "router", "routed_experts", "shared_experts", "shared_expert_gate")
MODEL_PARTS = ("embedding", "position", "final_norm", "head", "other")
TOWER_PARTS = ("tower", "projector")
PARTS = LAYER_PARTS + MODEL_PARTS + TOWER_PARTS + ("mtp",)

#: The feed-forward parts: together they are the oracle's ``mlp`` of a layer.
FFN_PARTS = ("mlp", "router", "routed_experts", "shared_experts", "shared_expert_gate")

PER = ("layer", "expert", "first_layer")
OPS = ("matmul", "lookup", "elementwise")

#: What an expression may name in a model's inventory: the spec's widths and counts, read as
#: :class:`~pipeline.spec.model.ModelSpec` resolves them (``head_dim`` is ``effective_head_dim``,
#: ``num_key_value_heads`` falls back to the query heads, ``moe_intermediate_size`` is the routed width,
#: ``shared_expert_intermediate_size`` the shared one), and its flags; ``vision`` is whether the spec has a tower
#: (a multimodal model's language model is ``model.language_model``, a text-only one's ``model``).
SYMBOLS = (
    "hidden_size", "intermediate_size", "vocab_size", "num_attention_heads", "num_key_value_heads", "head_dim",
    "max_position_embeddings", "num_experts", "num_experts_per_tok", "num_shared_experts", "moe_intermediate_size",
    "shared_expert_intermediate_size", "moe_latent_size", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim",
    "qk_nope_head_dim", "v_head_dim", "linear_num_key_heads", "linear_key_head_dim", "linear_num_value_heads",
    "linear_value_head_dim", "linear_conv_kernel_dim", "ssm_state_size", "ssm_conv_kernel", "ssm_expand",
    "ssm_intermediate_size", "ssm_num_heads", "ssm_n_groups", "ssm_dt_rank", "relative_attention_num_buckets", "type_vocab_size",
    "attn_output_gate", "tie_word_embeddings", "qk_norm", "qkv_bias", "o_bias", "mlp_bias", "norm_bias",
    "head_bias", "shared_expert_gate", "vision",
)

#: What an expression may name in a vision tower's inventory: the tower's fields, ``head_dim`` (its width over
#: its heads) and ``text_hidden_size``, the width of the text model a projector maps into.
TOWER_SYMBOLS = (
    "hidden_size", "intermediate_size", "num_attention_heads", "head_dim", "out_hidden_size", "projector_input_dim",
    "projector_output_dim", "patch_size",
    "spatial_merge_size", "num_position_embeddings", "in_channels", "temporal_patch_size", "text_hidden_size",
    "pooling_head", "projector_bias", "num_deepstack_mergers", "max_num_tiles", "num_aspect_ratios",
)

_ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Name, ast.Load,
                  ast.Constant)

#: The largest dimension, tensor and count: a signed 64-bit integer's, what every consumer can hold (and far
#: beyond any model: 9.2e18 parameters).
MAX_SIZE = 2 ** 63 - 1
#: The longest shape expression, in characters (the bundled profiles' longest is some 60).
MAX_EXPRESSION_CHARS = 200
#: The deepest nesting of operations in one shape expression (the bundled profiles' deepest is 3).
MAX_NESTING = 8
#: The characters a shape expression is written with.
_EXPRESSION_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ +-*/().")  # "." for 2.5

#: The symbols that read as 0 or 1: the spec's flags.
FLAG_SYMBOLS = ("attn_output_gate", "tie_word_embeddings", "qk_norm", "qkv_bias", "o_bias", "mlp_bias", "norm_bias",
                "head_bias", "shared_expert_gate", "vision")
#: The tower's flags (a tower inventory's ``when`` and ``bias`` read them; no count is one).
TOWER_FLAG_SYMBOLS = ("pooling_head", "projector_bias")
#: The counts the model IR lets be 0 (every other field it takes is at least 1: a width, a count of heads).
ZERO_SYMBOLS = ("num_shared_experts", "num_deepstack_mergers")

#: A range of whole numbers: the least and the largest value (``None``: unbounded that way).
Range = Tuple[Optional[int], Optional[int]]


class WeightFormatError(ValueError):
    """An inventory entry is malformed; ``path`` is where, under the profile."""

    def __init__(self, path: FieldPath, message: str):
        super().__init__(message)
        self.path = path


class Unpriced(ValueError):
    """A spec cannot be counted: a shape or condition needs *field*, which it leaves out (or a kind has no weights).

    Attributes:
        field: The missing spec field (``vision.in_channels`` for a tower's), or
            ``None`` when the profile states no inventory for a kind.
        reason: The sentence a report shows.
    """

    def __init__(self, field: Optional[str], reason: str):
        super().__init__(reason)
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class Expression:
    """One compiled integer expression over :data:`SYMBOLS` (or :data:`TOWER_SYMBOLS`).

    Attributes:
        text: The expression as the profile writes it.
        names: The symbols it reads.
    """

    text: str
    names: Tuple[str, ...]

    def missing(self, symbols: Mapping[str, Any]) -> Optional[str]:
        """The first symbol it reads that *symbols* holds as ``None``, or ``None``."""
        return next((name for name in self.names if symbols.get(name) is None), None)


@dataclass(frozen=True)
class Condition:
    """A ``when`` or ``bias`` entry: a symbol that must be true, or with ``negated`` false; ``always`` for ``true``."""

    symbol: Optional[str]
    negated: bool = False

    def holds(self, symbols: Mapping[str, Any]) -> bool:
        """Whether the tensor exists for *symbols*.

        Raises:
            Unpriced: If the symbol is ``None`` (the spec leaves the flag out).
        """
        if self.symbol is None:
            return not self.negated
        value = symbols.get(self.symbol)
        if value is None:
            raise Unpriced(self.symbol, f"whether it holds some tensors depends on {self.symbol}, "
                                        "which the spec does not state")
        return bool(value) != self.negated


ALWAYS = Condition(None)


@dataclass(frozen=True)
class Weight:
    """One entry of an inventory (see the module docstring for each attribute).

    ``shape_code`` is the whole shape compiled as one tuple expression, so
    resolving a tensor is one evaluation, not one per dimension.
    """

    role: str
    name: str
    shape: Tuple[Expression, ...]
    part: str
    per: str = "layer"
    when: Condition = ALWAYS
    bias: Optional[Condition] = None
    op: str = "matmul"
    shape_code: Optional[CodeType] = None
    copies: Optional[str] = None
    stacked: str = "leading"

    def dimensions(self, env: Mapping[str, Any]) -> Tuple[int, ...]:
        """The shape for one spec; *env* is :func:`environment`'s.

        Raises:
            Unpriced: If a dimension reads a field the spec leaves out, or the tensor would hold more than
                :data:`MAX_SIZE` parameters.
        """
        try:
            shape = eval(self.shape_code, env)  # noqa: S307  # ok: an AST of integer arithmetic, no builtins
        except TypeError:  # None in arithmetic: an unstated field
            shape = (None,)
        if None in shape:
            name = next(filter(None, (size.missing(env) for size in self.shape)))
            raise Unpriced(name, f"its inventory needs {name}, which the spec does not state")
        if math.prod(shape) > MAX_SIZE:
            raise Unpriced(None, f"its inventory gives {self.name} more than 2^63 - 1 parameters for the spec's "
                                 "values; no model holds that: a width or a count of the spec is wrong")
        return tuple(int(size) for size in shape)


@dataclass(frozen=True)
class Tensor:
    """A weight resolved against one spec.

    Attributes:
        role, name, part, per, op: As the entry states them (a bias gets role ``<role>.bias``).
        shape: Its dimensions, in elements.
        params: Elements of one copy: the product of ``shape``.
    """

    role: str
    name: str
    shape: Tuple[int, ...]
    part: str
    per: str
    op: str
    stacked: str = "leading"

    @property
    def params(self) -> int:
        """The number of parameters of one copy: the product of the shape."""
        return math.prod(self.shape)

    def to_dict(self) -> Dict[str, Any]:
        """The tensor as the artifact's ``weights`` list holds it."""
        return {"role": self.role, "name": self.name, "shape": list(self.shape), "part": self.part,
                "per": self.per, "op": self.op}


def compile_expression(text: Any, path: FieldPath, symbols: Sequence[str]) -> Expression:
    """Compile one shape expression, refusing anything but integer arithmetic over *symbols*.

    Raises:
        WeightFormatError: For a syntax error, an operator or call outside
            ``+ - * //``, a non-integer constant or an unknown name.
    """
    if isinstance(text, bool) or not isinstance(text, (int, str)):
        raise WeightFormatError(path, f"a dimension is a whole number or an expression, not {text!r}")
    if isinstance(text, int) and not 0 <= text <= MAX_SIZE:
        raise WeightFormatError(path, f"a dimension is a whole number from 0 to 2^63 - 1, not {text}")
    source = str(text)
    names = _expression_names(source, tuple(symbols))
    if isinstance(names, str):
        raise WeightFormatError(path, names)
    return Expression(source, names)


def _shown(source: str) -> str:
    """*source* quoted for a message, cut to its first 60 characters (a refused expression may be any length)."""
    return repr(source) if len(source) <= 60 else repr(source[:60]) + "..."


@functools.lru_cache(maxsize=None)
def _expression_names(source: str, symbols: Tuple[str, ...]) -> Union[Tuple[str, ...], str]:
    """The symbols *source* reads, in order, or why it is no dimension over *symbols* (the message).

    Memoized: the profiles of a folder spell the same few expressions hundreds of times, and parsing each
    is most of building a profile.
    """
    if len(source) > MAX_EXPRESSION_CHARS:
        return (f"{_shown(source)} is {len(source):,} characters long; a dimension is at most "
                f"{MAX_EXPRESSION_CHARS} (name the fields, the bundled profiles need some 60)")
    odd = next((char for char in source if char not in _EXPRESSION_CHARS), None)
    if odd is not None:
        return (f"{_shown(source)} holds {odd!r}; a dimension is written with field names, whole numbers, "
                "+ - * // and parentheses, nothing else")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        return f"{_shown(source)} is not an expression: write e.g. num_attention_heads * head_dim"
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return (f"{_shown(source)} negates with a unary minus; a dimension is never negative: write a whole "
                    "number, or fields added, multiplied, subtracted or divided")
        if not isinstance(node, _ALLOWED_NODES):
            return f"{_shown(source)} uses {type(node).__name__}; a dimension takes + - * // and parentheses only"
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool) or not isinstance(node.value, int)):
            return f"{_shown(source)} holds {node.value!r}; constants are whole numbers"
        if isinstance(node, ast.Constant) and node.value > MAX_SIZE:
            return f"{_shown(source)} holds {node.value}, above 2^63 - 1; no dimension is that large"
        if isinstance(node, ast.Name):
            if node.id not in symbols:
                return f"{_shown(source)} names {node.id!r}, which is not one of {list(symbols)}"
            names.append(node.id)
    depth = _nesting(tree.body)
    if depth > MAX_NESTING:
        return f"{_shown(source)} nests {depth} operations deep; a dimension nests at most {MAX_NESTING}"
    return dimension_problem(source, tree.body) or tuple(dict.fromkeys(names))


def _nesting(node: ast.AST) -> int:
    """How many operations deep *node* (of a checked expression: names, constants and binary operations) is."""
    if isinstance(node, ast.BinOp):
        return 1 + max(_nesting(node.left), _nesting(node.right))
    return 0


def symbol_range(name: str) -> Range:
    """The least and largest value the symbol *name* takes for a spec the model IR accepts: a flag 0 or 1, a count
    of :data:`ZERO_SYMBOLS` from 0, any other field (a width, a count of heads or layers) from 1, unbounded above."""
    if name in FLAG_SYMBOLS:
        return 0, 1
    return (0 if name in ZERO_SYMBOLS else 1), None


def _range(node: ast.AST) -> Range:
    """The range of *node* from its symbols' (:func:`symbol_range`) by interval arithmetic; ``(None, None)`` where
    an operand can be negative or a divisor 0 (what :func:`dimension_problem` refuses)."""
    if isinstance(node, ast.Constant):
        return node.value, node.value
    if isinstance(node, ast.Name):
        return symbol_range(node.id)
    assert isinstance(node, ast.BinOp)
    (left_low, left_high), (right_low, right_high) = _range(node.left), _range(node.right)
    if left_low is None or right_low is None or left_low < 0 or right_low < 0:
        return None, None

    def both(first: Optional[int], second: Optional[int], how: Any) -> Optional[int]:
        return None if first is None or second is None else how(first, second)

    if isinstance(node.op, ast.Add):
        return left_low + right_low, both(left_high, right_high, int.__add__)
    if isinstance(node.op, ast.Mult):
        high = 0 if 0 in (left_high, right_high) else both(left_high, right_high, int.__mul__)
        return left_low * right_low, high
    if isinstance(node.op, ast.Sub):
        return both(left_low, right_high, int.__sub__), both(left_high, right_low, int.__sub__)
    if right_low == 0:  # floor division by what can be 0
        return None, None
    return (0 if right_high is None else left_low // right_high), both(left_high, right_low, int.__floordiv__)


def dimension_problem(source: str, node: ast.AST) -> Optional[str]:
    """Why the dimension *node* (of the expression *source*) is not a whole number at least 0 and at most
    :data:`MAX_SIZE` for every spec the profile accepts, or ``None``: the outermost subtraction that can be
    negative, division by what can be 0, or a bounded value above :data:`MAX_SIZE`, told first."""
    low, high = _range(node)
    if high is not None and high > MAX_SIZE:
        return f"{_shown(source)} can be {high:,}, above 2^63 - 1; no dimension is that large"
    if not isinstance(node, ast.BinOp):
        return None
    if isinstance(node.op, ast.FloorDiv) and (_range(node.right)[0] or 0) <= 0:
        return (f"{_shown(source)} divides by {ast.unparse(node.right)}, which can be 0 for a spec the profile "
                "accepts; divide only by a whole number above 0 or a field that is never 0")
    if isinstance(node.op, ast.Sub) and (low is None or low < 0):
        return (f"{_shown(source)} subtracts {ast.unparse(node.right)} from {ast.unparse(node.left)}, which can "
                "be negative for a spec the profile accepts (the fields are unbounded); a dimension is never "
                "negative: subtract only what is provably no larger (a whole number or a flag below a field's "
                "least value)")
    return dimension_problem(source, node.left) or dimension_problem(source, node.right)


@functools.lru_cache(maxsize=None)
def _eval_code(source: str, filename: str = "<inventory>") -> CodeType:
    """*source* compiled for ``eval`` (memoized: the same tuples of sizes recur across a folder's profiles;
    a code object is immutable, so sharing one changes nothing)."""
    return compile(source, filename, "eval")


def parse_condition(text: Any, path: FieldPath, symbols: Sequence[str]) -> Condition:
    """Parse ``when``/``bias``: ``true``, ``false``, ``SYMBOL`` or ``not SYMBOL``.

    Raises:
        WeightFormatError: For anything else, or an unknown symbol.
    """
    if isinstance(text, bool):
        return Condition(None, negated=not text)
    words = str(text).split()
    negated = len(words) == 2 and words[0] == "not"
    symbol = words[-1] if words else ""
    if not (len(words) == 1 or negated) or symbol not in symbols:
        raise WeightFormatError(path, f"{text!r} is not a condition: write true, a field of {list(symbols)}, "
                                      "or 'not' and one")
    return Condition(symbol, negated)


@dataclass(frozen=True)
class Inventory:
    """An inventory's weights in file order, also compiled into one expression for counting.

    It iterates, measures and tests true as its ``weights`` do.

    Attributes:
        weights: The entries.
        names: Every symbol a shape or a condition of them reads.
        code: One tuple expression: each tensor's parameters (a bias after
            its weight), 0 where a condition leaves it out.
        slots: ``(part, per, is a matmul weight)`` of each member of that tuple.
        sums: One expression of three sums of those sizes: the ``layer``
            tensors', one routed expert's, and the ``first_layer`` tensors'
            (what :func:`layer_sums` returns).
    """

    weights: Tuple[Weight, ...] = ()
    names: Tuple[str, ...] = ()
    code: Optional[CodeType] = None
    slots: Tuple[Tuple[str, str, bool], ...] = ()
    sums: Optional[CodeType] = None

    def __iter__(self) -> Iterator[Weight]:
        return iter(self.weights)

    def __len__(self) -> int:
        return len(self.weights)


def _condition_text(condition: Condition) -> str:
    """A condition as Python source over the symbols."""
    if condition.symbol is None:
        return "False" if condition.negated else "True"
    return f"(not {condition.symbol})" if condition.negated else f"({condition.symbol})"


def _compiled(weights: Sequence[Weight]) -> Inventory:
    """The :class:`Inventory` of *weights*: one expression of every tensor's size (see :func:`sizes`)."""
    terms, slots, names = [], [], []
    for weight in weights:
        names += [name for size in weight.shape for name in size.names]
        when = _condition_text(weight.when)
        names += [weight.when.symbol] if weight.when.symbol else []
        times = f" * ({weight.copies})" if weight.copies else ""
        names += [weight.copies] if weight.copies else []
        product = " * ".join(f"({size.text})" for size in weight.shape)
        terms.append(f"(({product}){times} if {when} else 0)")
        slots.append((weight.part, weight.per, weight.op == "matmul"))
        if weight.bias is not None:
            names += [weight.bias.symbol] if weight.bias.symbol else []
            terms.append(f"(({weight.shape[0].text}){times} if {when} and {_condition_text(weight.bias)} else 0)")
            slots.append((weight.part, weight.per, False))
    code = _eval_code("(" + "".join(term + "," for term in terms) + ")")
    by_per = {per: " + ".join(term for term, slot in zip(terms, slots) if slot[1] == per) or "0" for per in PER}
    sums = _eval_code(f"({by_per['layer']}, {by_per['expert']}, {by_per['first_layer']})")
    return Inventory(tuple(weights), tuple(dict.fromkeys(names)), code, tuple(slots), sums)


def layer_sums(weights: Inventory, env: Mapping[str, Any]) -> Optional[Tuple[int, int, int]]:
    """``(layer tensors, one routed expert's, first-layer tensors)``: the parameters of one layer in three sums,
    from one evaluation; ``None`` when a field the inventory reads is unstated, or a sum is above :data:`MAX_SIZE`
    (:func:`sizes` then says which)."""
    if weights.sums is None or None in map(env.get, weights.names):
        return None
    found = eval(weights.sums, env)  # noqa: S307  # ok: an AST of integer arithmetic, no builtins
    return found if max(found) <= MAX_SIZE else None  # too large: sizes() names the tensor


def _exclusive(first: Optional[str], second: Optional[str]) -> bool:
    """Whether two ``when`` conditions never hold together: ``X`` and ``not X``."""
    if first is None or second is None:
        return False
    return first.strip() == "not " + second.strip() or second.strip() == "not " + first.strip()


def parse_weights(entries: Sequence[Mapping[str, Any]], path: FieldPath,
                  symbols: Sequence[str] = SYMBOLS, parts: Sequence[str] = PARTS) -> Inventory:
    """Build an inventory from a profile's ``weights`` list (already checked against the profile schema).

    Raises:
        WeightFormatError: For a bad expression or condition, a part not in
            *parts*, or two entries of the same ``name`` (unless one holds ``when: X`` and the other
            ``when: not X``: one tensor whose part the flag decides, RoBERTa's ``lm_head.bias``), or an entry
            whose ``when`` reads ``tie_word_embeddings`` and that holds a ``bias``: tying shares the weight only
            (transformers' ``_tied_weights_keys`` names ``lm_head.weight``), so a tied head keeps its bias, which
            is an entry of its own (GPT-J's and PhiMoE's ``lm_head.bias``).
    """
    weights = []
    seen: Dict[str, Optional[str]] = {}
    for index, entry in enumerate(entries):
        where = path + (index,)
        if entry["part"] not in parts:
            raise WeightFormatError(where + ("part",), f"part {entry['part']!r} is not one of {list(parts)} here")
        if "bias" in entry and "tie_word_embeddings" in str(entry.get("when", "")).split():
            raise WeightFormatError(where + ("bias",), f"{entry['name']!r} is left out by tie_word_embeddings, but "
                                                       "tying shares the weight only: its bias stays, so list it "
                                                       "as an entry of its own (gptj.yaml's lm_head.bias)")
        if entry["name"] in seen and not _exclusive(seen[entry["name"]], entry.get("when")):
            raise WeightFormatError(where + ("name",), f"{entry['name']!r} is listed twice")
        seen[entry["name"]] = entry.get("when")
        copies = _copies(entry, where, symbols)
        shape = tuple(compile_expression(size, where + ("shape", axis), symbols)
                      for axis, size in enumerate(entry["shape"]))
        _check_product(shape, where + ("shape",))
        default_op = "matmul" if len(shape) == 2 else "elementwise"
        shape_code = _eval_code("(" + "".join(f"({size.text})," for size in shape) + ")", "<shape>")
        weights.append(Weight(
            role=entry["role"], name=entry["name"], shape=shape, part=entry["part"],
            per=entry.get("per", "layer"),
            when=parse_condition(entry["when"], where + ("when",), symbols) if "when" in entry else ALWAYS,
            bias=parse_condition(entry["bias"], where + ("bias",), symbols) if "bias" in entry else None,
            op=entry.get("op", default_op), shape_code=shape_code, copies=copies,
            stacked=entry.get("stacked", "leading")))
    return _compiled(weights) if weights else NONE


def _copies(entry: Mapping[str, Any], where: FieldPath, symbols: Sequence[str]) -> Optional[str]:
    """The count an entry's ``copies`` names, or ``None``; its name holds ``{i}`` exactly when it has copies.

    Raises:
        WeightFormatError: For a ``copies`` that names no count of *symbols*, or a name and ``copies`` that
            disagree on ``{i}``.
    """
    copies = entry.get("copies")
    flags = FLAG_SYMBOLS + TOWER_FLAG_SYMBOLS
    if copies is not None and (copies not in symbols or copies in flags):
        counts = [name for name in symbols if name not in flags]
        raise WeightFormatError(where + ("copies",), f"copies {copies!r} is not a count of {counts}")
    if (copies is None) == ("{i}" in entry["name"]):
        raise WeightFormatError(where + ("name",), f"{entry['name']!r}: a tensor held `copies` times names each "
                                                   "copy's index {i} (deepstack_merger_list.{i}.norm.weight), and "
                                                   "only such a tensor does")
    return copies


def _check_product(shape: Sequence[Expression], path: FieldPath) -> None:
    """Refuse a shape whose dimensions of whole numbers and flags alone multiply past :data:`MAX_SIZE`.

    Raises:
        WeightFormatError: At *path*, naming the product.
    """
    highs = [_range(ast.parse(size.text, mode="eval").body)[1] for size in shape]
    if None not in highs and math.prod(highs) > MAX_SIZE:
        raise WeightFormatError(path, f"the shape {[size.text for size in shape]} can hold {math.prod(highs):,} "
                                      "parameters, above 2^63 - 1; no tensor is that large")


def environment(values: Mapping[str, Any]) -> Dict[str, Any]:
    """The namespace shapes are evaluated in: *values* and no builtins (build it once per spec)."""
    return {**values, "__builtins__": {}}


def sizes(weights: Inventory, env: Mapping[str, Any]) -> List[Tuple[str, str, int, bool]]:
    """``(part, per, parameters of one copy, is a matmul weight)`` of each tensor, as :func:`resolve` lists them
    (a tensor held ``copies`` times as one entry of all its copies' parameters).

    The counting path: the same tensors as :func:`resolve`, from one
    evaluation of the inventory's compiled expression, without building their
    records (a tensor a condition leaves out is not listed).

    Raises:
        Unpriced: If a shape or condition reads a field the spec leaves out, or a tensor would hold more than
            :data:`MAX_SIZE` parameters.
    """
    if weights.code is not None and None not in map(env.get, weights.names):
        values = eval(weights.code, env)  # noqa: S307  # ok: an AST of integer arithmetic, no builtins
        if max(values, default=0) <= MAX_SIZE:  # else the tensor by tensor path below names the one too large
            return [(part, per, value, matmul) for (part, per, matmul), value in zip(weights.slots, values) if value]
    out = []
    for weight in weights:
        if not weight.when.holds(env):
            continue
        shape, times = weight.dimensions(env), _times(weight, env)
        out.append((weight.part, weight.per, math.prod(shape) * times, weight.op == "matmul"))
        if weight.bias is not None and weight.bias.holds(env):
            out.append((weight.part, weight.per, shape[0] * times, False))
    return out


def _times(weight: Weight, env: Mapping[str, Any]) -> int:
    """How many copies of *weight* the spec holds: 1, or the count its ``copies`` names.

    Raises:
        Unpriced: If the spec leaves that count out.
    """
    if weight.copies is None:
        return 1
    count = env.get(weight.copies)
    if count is None:
        raise Unpriced(weight.copies, f"its inventory holds {weight.name} once per {weight.copies}, which the spec "
                                      "does not state")
    return count


def _bias_name(name: str) -> str:
    """``self_attn.q_proj.weight`` -> ``self_attn.q_proj.bias``."""
    return (name[:-len(".weight")] if name.endswith(".weight") else name) + ".bias"


def resolve(weights: Sequence[Weight], symbols: Mapping[str, Any]) -> List[Tensor]:
    """The tensors *weights* gives for one spec, in inventory order, a bias after its weight.

    Raises:
        Unpriced: If a shape or condition reads a field the spec leaves out.
    """
    tensors = []
    env = symbols if "__builtins__" in symbols else environment(symbols)
    for weight in weights:
        if not weight.when.holds(env):
            continue
        shape = weight.dimensions(env)
        bias = weight.bias is not None and weight.bias.holds(env)
        for name in _copy_names(weight, env):
            tensors.append(Tensor(weight.role, name, shape, weight.part, weight.per, weight.op, weight.stacked))
            if bias:
                tensors.append(Tensor(weight.role + ".bias", _bias_name(name), shape[:1], weight.part,
                                      weight.per, "elementwise"))
    return tensors


def _copy_names(weight: Weight, env: Mapping[str, Any]) -> List[str]:
    """The name of each copy of *weight*: its own, or ``{i}`` replaced by each index of its ``copies``."""
    if weight.copies is None:
        return [weight.name]
    return [weight.name.replace("{i}", str(index)) for index in range(_times(weight, env))]


EMPTY: Mapping[str, Inventory] = MappingProxyType({})
NONE = Inventory()
