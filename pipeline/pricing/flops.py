"""FLOPs at a sequence length, and the bytes a KV cache, a recurrent state and the weights hold, per layer kind.

Pure arithmetic over a resolved stack (no torch): the weight matmuls come from
each kind's inventory (:mod:`pipeline.pricing.weights`: 2 FLOPs, one FMA, per
active matmul weight per token, routed experts at ``num_experts_per_tok``),
the attention from the kind's flavour and its op counts (``attBMM / 2``
softmax-attention blocks per layer, ``linrec`` recurrences), the widths from
the spec. Every count follows transformers 5.24.0's eager code, the one a
kind's op profile was read from:

- **Softmax attention** (``eager_attention_forward`` in each family's
  ``modeling_*.py``): ``matmul(query, key^T)`` and ``matmul(weights, value)``,
  ``2 · heads · (d_qk + d_v)`` FLOPs per (query, key) pair. ``d_qk = d_v =
  head_dim``; MLA (``DeepseekV3Attention``) has ``d_qk = qk_nope_head_dim +
  qk_rope_head_dim`` and ``d_v = v_head_dim`` per head, after ``kv_b_proj``.
- **Two conventions** for the pairs. ``dense``: every (query, key) pair of
  the score matrix, ``S · S`` whatever the mask (what eager attention
  computes, what ``torch.utils.flop_counter.FlopCounterMode`` and torchtitan
  count). ``causal``: only the pairs the mask keeps, ``S (S + 1) / 2`` for a
  causal layer, ``Σ min(i, w)`` for a sliding window of ``w``, each chunk's triangle for chunked attention (Megatron-LM
  and MaxText halve the matrix the same way). A bidirectional encoder keeps
  every pair in both. A T5 decoder's second block is cross-attention over
  the encoder's ``S`` tokens, all pairs kept.
- **Linear attention** (``attention: linear``): the chunked scan the eager
  path runs (:data:`LINEAR_SCANS`, :func:`_linear`), padded to whole chunks,
  plus the depthwise causal convolution; ``causal`` counts the in-chunk
  matrices at their lower triangle.
- **State-space mixers** (``attention: ssm``, :data:`SSM_SCANS`, :func:`_ssm`),
  at the ``ssm_*`` widths: Mamba 1's selective scan
  (``mamba_selective_scan`` in modeling_mamba.py, its sequential torch path:
  one ``matmul(ssm_state, C)`` of ``width x state`` per token, the
  discretisation elementwise), Mamba2's SSD (``mamba2_chunk_scan`` in
  modeling_mamba2.py, the chunked form Nemotron-H's linear kind is priced by,
  :func:`_ssd`), each plus the depthwise causal convolution.
- **Cross-attention** (``attention: cross``, Mllama's
  MllamaCrossAttentionDecoderLayer): each of the ``S`` text queries over every
  image token, :func:`image_tokens` (one image at its most tiles), all pairs
  kept, under either convention; its key and value projections run once
  over the image's tokens, not the text's (:data:`CROSS_SOURCE_ROLES`); its
  cache is the image's keys and values, a state of the sequence whatever its
  length.
- **Training** is 3 × forward (the backward pass costs twice the forward's
  matmuls: the 6N rule), stated as such, not measured.

Bytes at the spec's ``torch_dtype``: a softmax layer caches ``2 · kv_heads ·
head_dim`` values per token (K and V; GQA and MQA by their KV heads), a
sliding layer at most ``sliding_window - 1`` tokens of them (transformers'
``cache_utils.py``, ``DynamicSlidingWindowLayer.update``: "Only cache the last
``self.sliding_window - 1`` tokens"; the query is the window's last), a chunked layer likewise at most
``attention_chunk_size - 1`` (``LAYER_CLASS_MAP``: "sliding and chunked are the same in how they should behave,
only the mask differs"); MLA the
latent ``kv_lora_rank`` plus the shared rope key ``qk_rope_head_dim`` per
token, as ``DeepseekV3Attention`` caches them;
a linear layer a constant state per sequence (the recurrent state ``value
heads · key_head_dim · value_head_dim`` and the convolution's ``conv_dim ·
kernel``), a state-space layer likewise (``width · ssm_state_size`` and its
convolution's ``conv_dim · ssm_conv_kernel``); a cross-attention block the encoder's keys and values per encoder
token.

Nothing here runs inside ``check``: the artifacts, ``show`` and ``list`` call it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple

from pipeline.pricing.parameters import model_symbols, tower_symbols
from pipeline.pricing.weights import NONE, resolve, sizes

if TYPE_CHECKING:
    from pipeline.pricing.op_profiles import LayerKind, OpProfile
    from pipeline.pricing.stack import LayerStack, StackGroup
    from pipeline.spec.model import ModelSpec

#: The two named conventions for the attention score matrix.
CONVENTIONS = ("dense", "causal")

#: The sequence lengths every artifact states, beside ``max_position_embeddings``.
DEFAULT_SEQ_LENS = (1, 4096)

#: Bytes per element of each checkpoint dtype (a dtype of sub-byte elements packs two per byte).
DTYPE_BYTES: Mapping[str, float] = {
    "bfloat16": 2, "float16": 2, "float32": 4, "float64": 8, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "float8_e8m0fnu": 1, "float4_e2m1fn_x2": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1,
    "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1}

#: The dtype bytes are priced at when a spec states no ``torch_dtype`` (the catalogue's checkpoints are bfloat16).
DEFAULT_DTYPE = "bfloat16"

#: How each arch's linear kind scans, in the eager torch path the reference runs: the form and its chunk in tokens.
#: ``delta``: ``torch_chunk_gated_delta_rule`` (modeling_qwen3_next.py, modeling_qwen3_5.py,
#: modeling_qwen3_5_moe.py; ``chunk_size=64``, the default its callers keep). ``ssd``: ``mamba2_chunk_scan``
#: (modeling_nemotron_h.py, ``NemotronHMamba2Mixer``; ``config.chunk_size``, 128 by NemotronHConfig's default
#: and in every catalogue config).
LINEAR_SCANS: Mapping[str, Tuple[str, int]] = {"qwen3_next": ("delta", 64), "qwen3_5": ("delta", 64),
                                               "qwen3_5_moe": ("delta", 64), "nemotron_h": ("ssd", 128)}

#: How each arch's ssm kind scans, in the eager torch path the reference runs: the form and its chunk in tokens.
#: ``selective``: Mamba 1's ``mamba_selective_scan`` (modeling_mamba.py; its sequential loop, chunk 0: none).
#: ``ssd``: ``mamba2_chunk_scan`` (modeling_mamba2.py, ``Mamba2Mixer``; ``config.chunk_size``, 256 by
#: Mamba2Config's default; Bamba's BambaMixer the same, mamba_chunk_size 256 by BambaConfig's default).
SSM_SCANS: Mapping[str, Tuple[str, int]] = {"mamba": ("selective", 0), "falcon_mamba": ("selective", 0),
                                            "mamba2": ("ssd", 256), "bamba": ("ssd", 256)}

#: Kinds whose softmax attention sees every key (no causal mask), by arch; ``"*"``: every kind of it.
#: RobertaSelfAttention (modeling_roberta.py), T5Attention of the encoder stack (modeling_t5.py,
#: ``T5Stack(is_decoder=False)``; mT5's the same, modeling_mt5.py), BartEncoderLayer's self_attn (modeling_bart.py:
#: BartEncoder.forward's create_bidirectional_mask, no cache); a vision tower's blocks are bidirectional too
#: (:func:`tower_flops`).
BIDIRECTIONAL: Mapping[str, Tuple[str, ...]] = {"bart": ("encoder",), "mt5": ("encoder", "gated_encoder"),
                                                "roberta": ("*",), "t5": ("encoder", "gated_encoder")}


@dataclass(frozen=True)
class GroupFlops:
    """One group of a stack at a sequence length: FLOPs over the sequence and bytes per token.

    Attributes:
        kind: The layer kind.
        count: Layers in the group.
        mtp: Whether these are MTP layers (apart from the forward).
        attention: The kind's attention flavour.
        weights: Forward FLOPs of the group's weight matmuls over the sequence.
        dense: Attention FLOPs (scores and weighted sums, or the recurrence) over the sequence, ``dense``.
        causal: The same, ``causal``.
        kv_per_token: Cache bytes one token adds to the group (all its layers).
        kv_window: The tokens a layer keeps at most (its window), ``None`` for no cap.
        state: Bytes a sequence holds whatever its length (a linear kind's state), the group's.
        encoder_per_token: Cross-attention cache bytes per encoder token, the group's.
    """

    kind: str
    count: int
    mtp: bool
    attention: str
    weights: int
    dense: int
    causal: int
    kv_per_token: int
    kv_window: Optional[int]
    state: int
    encoder_per_token: int

    def attention_flops(self, convention: str) -> int:
        """The attention FLOPs under *convention* (``dense`` or ``causal``)."""
        return self.dense if convention == "dense" else self.causal

    def kv_bytes(self, context: int) -> int:
        """Cache and state bytes of the group for one sequence of *context* tokens."""
        tokens = context if self.kv_window is None else min(context, self.kv_window)
        return self.kv_per_token * tokens + self.state + self.encoder_per_token * context

    def to_dict(self) -> Dict[str, Any]:
        """The group as the artifact's ``flops.groups`` holds it."""
        return {"kind": self.kind, "count": self.count, "mtp": self.mtp, "attention": self.attention,
                "weights": self.weights, "attention_dense": self.dense, "attention_causal": self.causal}


@dataclass(frozen=True)
class ModelFlops:
    """A model's forward FLOPs for one sequence of ``seq_len`` tokens, per group, and its bytes.

    Attributes:
        seq_len: Tokens in the sequence.
        groups: Per stack group, body and MTP.
        head: The output projection's FLOPs over the sequence (every position's logits).
        dtype: The dtype the bytes are priced at.
        weight_bytes: The weights (``total`` parameters, MTP apart) at that dtype.
    """

    seq_len: int
    groups: Tuple[GroupFlops, ...]
    head: int
    dtype: str
    weight_bytes: int

    def forward(self, convention: str = "dense") -> int:
        """Forward FLOPs of the body and head over the sequence (MTP layers apart)."""
        return self.head + sum(g.weights + g.attention_flops(convention) for g in self.groups if not g.mtp)

    def attention(self, convention: str = "dense") -> int:
        """The body's attention FLOPs over the sequence."""
        return sum(g.attention_flops(convention) for g in self.groups if not g.mtp)

    def mtp(self, convention: str = "dense") -> int:
        """The MTP layers' FLOPs over the sequence (their own extras' matmuls included)."""
        return sum(g.weights + g.attention_flops(convention) for g in self.groups if g.mtp)

    def per_token(self, convention: str = "dense") -> int:
        """Forward FLOPs per token (:meth:`_per_token` of :meth:`forward`)."""
        return self._per_token(self.forward(convention))

    def training(self, convention: str = "dense") -> int:
        """Training FLOPs of the sequence (:meth:`_training` of :meth:`forward`)."""
        return self._training(self.forward(convention))

    def _per_token(self, forward: int) -> int:
        """The sequence's *forward* FLOPs per token: divided by its length (rounded down)."""
        return forward // self.seq_len

    @staticmethod
    def _training(forward: int) -> int:
        """Training FLOPs of a sequence whose forward costs *forward*: 3 × forward (a backward of twice its cost)."""
        return 3 * forward

    def kv_per_token(self) -> int:
        """Cache bytes one token adds, body layers, windows not yet full."""
        return sum(g.kv_per_token for g in self.groups if not g.mtp)

    def kv_bytes(self, context: Optional[int] = None) -> int:
        """Cache and state bytes of one sequence of *context* tokens (default: the sequence length)."""
        return sum(g.kv_bytes(self.seq_len if context is None else context) for g in self.groups if not g.mtp)

    def state_bytes(self) -> int:
        """Bytes a sequence holds whatever its length (the linear kinds' states)."""
        return sum(g.state for g in self.groups if not g.mtp)

    def to_dict(self) -> Dict[str, Any]:
        """The figures as the artifact's ``flops.at`` entries hold them."""
        forward = {c: self.forward(c) for c in CONVENTIONS}  # once each: per_token and training are of it
        return {"seq_len": self.seq_len,
                **{f"forward_{c}": forward[c] for c in CONVENTIONS},
                **{f"per_token_{c}": self._per_token(forward[c]) for c in CONVENTIONS},
                **{f"training_{c}": self._training(forward[c]) for c in CONVENTIONS},
                **{f"attention_{c}": self.attention(c) for c in CONVENTIONS},
                "head": self.head, "mtp_dense": self.mtp("dense"), "mtp_causal": self.mtp("causal"),
                "kv_cache_bytes": self.kv_bytes(), "groups": [g.to_dict() for g in self.groups]}


def dtype_bytes(spec: "ModelSpec") -> float:
    """Bytes per element at the spec's ``torch_dtype`` (:data:`DEFAULT_DTYPE` when it states none)."""
    return DTYPE_BYTES[spec.torch_dtype or DEFAULT_DTYPE]


def causal_pairs(seq_len: int, window: Optional[int] = None) -> int:
    """The (query, key) pairs a causal mask keeps over *seq_len* tokens, each query seeing at most *window* keys."""
    if window is None or window >= seq_len:
        return seq_len * (seq_len + 1) // 2
    return window * (window + 1) // 2 + (seq_len - window) * window


def chunked_pairs(seq_len: int, chunk: int) -> int:
    """The (query, key) pairs a chunked causal mask keeps over *seq_len* tokens: each query sees the keys of its
    own chunk of *chunk* tokens up to itself (transformers 5.24.0 masking_utils.py chunked_overlay:
    ``kv_idx // chunk == q_idx // chunk``)."""
    whole, rest = divmod(seq_len, chunk)
    return whole * chunk * (chunk + 1) // 2 + rest * (rest + 1) // 2


def _matmul_active(weights: Any, symbols: Mapping[str, Any], top_k: int) -> int:
    """Matmul weights one token passes through: a routed expert's *top_k* times, a first-layer table never."""
    return sum(params * (top_k if per == "expert" else 1)
               for _, per, params, matmul in sizes(weights, symbols) if matmul and per != "first_layer")


#: The roles of a cross-attention (``attention: cross``) kind's projections that read the image's tokens, not the
#: text's: MllamaTextCrossAttention's k_proj and v_proj over cross_attention_states (modeling_mllama.py).
CROSS_SOURCE_ROLES = ("k_proj", "v_proj")


def _weight_flops(spec: "ModelSpec", kind: "LayerKind", symbols: Mapping[str, Any], seq_len: int) -> int:
    """Forward FLOPs of one layer's weight matmuls over *seq_len* tokens: every matmul weight over the sequence,
    except a cross-attention kind's key and value projections (:data:`CROSS_SOURCE_ROLES`), which run once over
    the image's tokens (:func:`image_tokens`)."""
    top_k = spec.num_experts_per_tok or 0
    if kind.attention != "cross":
        return 2 * seq_len * _matmul_active(kind.weights, symbols, top_k)
    text = image = 0
    for tensor in resolve(kind.weights, symbols):
        if tensor.op != "matmul" or tensor.per == "first_layer":
            continue
        params = tensor.params * (top_k if tensor.per == "expert" else 1)
        if tensor.role in CROSS_SOURCE_ROLES:
            image += params
        else:
            text += params
    return 2 * (seq_len * text + image_tokens(spec) * image)


def _head_widths(spec: "ModelSpec", kind: "LayerKind") -> Tuple[int, int]:
    """``(d_qk, d_v)`` per head of the kind's softmax attention."""
    if kind.attention == "mla":
        return spec.qk_nope_head_dim + spec.qk_rope_head_dim, spec.v_head_dim
    return spec.effective_head_dim, spec.effective_head_dim


def _bidirectional(arch: str, kind: str) -> bool:
    """Whether the kind's self-attention sees every key (:data:`BIDIRECTIONAL`)."""
    kinds = BIDIRECTIONAL.get(arch, ())
    return "*" in kinds or kind in kinds


def _softmax(spec: "ModelSpec", arch: str, kind: "LayerKind", seq_len: int) -> Tuple[int, int]:
    """``(dense, causal)`` FLOPs of one layer's softmax-attention blocks over *seq_len* tokens.

    The first block is self-attention; any further one (a T5 decoder's) is cross-attention over as many encoder
    tokens, all pairs kept.
    """
    blocks = kind.ops.attBMM // 2
    if not blocks:
        return 0, 0
    d_qk, d_v = _head_widths(spec, kind)
    per_pair = 2 * spec.num_attention_heads * (d_qk + d_v)
    if kind.attention == "cross":  # every query over every image token, no mask to halve it
        cross = blocks * seq_len * image_tokens(spec) * per_pair
        return cross, cross
    full = seq_len * seq_len
    window = spec.sliding_window if kind.attention == "sliding" else None
    if _bidirectional(arch, kind.name):
        kept = full
    elif kind.attention == "chunked":
        kept = chunked_pairs(seq_len, spec.attention_chunk_size)
    else:
        kept = causal_pairs(seq_len, window)
    cross = (blocks - 1) * full * per_pair
    return full * per_pair + cross, kept * per_pair + cross


def _linear(spec: "ModelSpec", arch: str, seq_len: int) -> Tuple[int, int]:
    """``(dense, causal)`` FLOPs of one linear layer's chunked scan and causal convolution over *seq_len* tokens.

    The sequence is padded to whole chunks of ``C`` tokens (``N`` of them), per value head of key width ``k``
    and value width ``v``. Gated DeltaNet: ``k_beta @ key^T`` and ``query @ key^T`` (``C x C`` over ``k``) per
    chunk, then per chunk ``k_cumdecay @ state``, ``query @ state``, ``key^T @ v_new`` (``C x k x v``) and
    ``intra @ v_new`` (``C x C`` over ``v``); ``solve_triangular`` is not a matmul the counter prices. Mamba2's
    SSD (Nemotron-H): :func:`_ssd`. ``causal`` counts the ``C x C`` (and chunk-by-chunk) matrices at the lower
    triangle the masks keep. The depthwise convolution: :func:`_conv`.
    """
    form, chunk = LINEAR_SCANS[arch]
    chunks = -(-seq_len // chunk)
    k, v = spec.linear_key_head_dim, spec.linear_value_head_dim
    square, triangle = chunk * chunk, chunk * (chunk + 1) // 2
    if form == "delta":
        dense = chunks * (square * (4 * k + 2 * v) + 6 * chunk * k * v)
        causal = chunks * (triangle * (4 * k + 2 * v) + 6 * chunk * k * v)
    else:
        dense, causal = _ssd(seq_len, chunk, k, v)
    conv = _conv(_conv_dim(spec), spec.linear_conv_kernel_dim, seq_len)
    heads = spec.linear_num_value_heads
    return heads * dense + conv, heads * causal + conv


def _ssd(seq_len: int, chunk: int, k: int, v: int) -> Tuple[int, int]:
    """``(dense, causal)`` FLOPs of one head's SSD scan (``mamba2_chunk_scan``) of state width *k*, head width *v*.

    ``C B^T`` and its product with ``x`` (``C x C`` over the state and the head) per chunk, the chunk states and
    their read (``C x k x v``), and the recurrence between chunk boundaries (``(N + 1)^2 x k x v``).
    """
    chunks = -(-seq_len // chunk)
    square, triangle = chunk * chunk, chunk * (chunk + 1) // 2
    dense = chunks * (2 * square * (k + v) + 4 * chunk * k * v) + 2 * (chunks + 1) ** 2 * k * v
    causal = chunks * (2 * triangle * (k + v) + 4 * chunk * k * v) + (chunks + 1) * (chunks + 2) * k * v
    return dense, causal


def _conv(channels: int, kernel: int, seq_len: int) -> int:
    """FLOPs of a depthwise causal convolution of *channels* and *kernel* taps over *seq_len* tokens.

    Padded by ``kernel - 1``, it is counted over its whole output; its input is at least ``kernel`` tokens long,
    since a prefill's cache hands it the conv state, padded to the kernel (``cache_utils.py``,
    ``LinearAttentionCacheLayerMixin.update_conv_state``).
    """
    return 2 * channels * kernel * (max(seq_len, kernel) + kernel - 1)


def _ssm_width(spec: "ModelSpec") -> int:
    """The state-space mixer's width, its intermediate channels: ``ssm_intermediate_size`` when stated (Mamba 1),
    else ``ssm_expand * hidden_size`` (Mamba2's ``int(config.expand * hidden_size)``)."""
    return spec.ssm_intermediate_size or spec.ssm_expand * spec.hidden_size


def _ssm_conv_dim(spec: "ModelSpec") -> int:
    """Channels of a state-space mixer's depthwise convolution: x (the width), and Mamba2's B and C per group."""
    return _ssm_width(spec) + 2 * (spec.ssm_n_groups or 0) * spec.ssm_state_size


def _ssm(spec: "ModelSpec", arch: str, seq_len: int) -> Tuple[int, int]:
    """``(dense, causal)`` FLOPs of one state-space layer's scan and causal convolution over *seq_len* tokens.

    Mamba 1's selective scan reads the state out once per token, ``matmul(ssm_state, C)`` over ``width x state``
    (the same whatever the mask: the recurrence has no score matrix); Mamba2's SSD is :func:`_ssd` per head, of
    head width ``width / ssm_num_heads``.
    """
    form, chunk = SSM_SCANS[arch]
    width, state = _ssm_width(spec), spec.ssm_state_size
    if form == "selective":
        dense = causal = 2 * seq_len * width * state
    else:
        heads = spec.ssm_num_heads
        dense, causal = (heads * flops for flops in _ssd(seq_len, chunk, state, width // heads))
    conv = _conv(_ssm_conv_dim(spec), spec.ssm_conv_kernel, seq_len)
    return dense + conv, causal + conv


def image_tokens(spec: "ModelSpec") -> int:
    """The tokens a cross-attention (``attention: cross``) layer attends to: one image at its most tiles, each
    tile's patches and class token (transformers 5.24.0 modeling_mllama.py MllamaModel: cross_attention_states
    of ``num_tiles * num_patches`` per image, ``num_patches = (image_size // patch_size) ** 2 + 1``), so
    ``max_num_tiles * num_position_embeddings`` of the tower; 0 without a tower that states both."""
    tower = spec.vision
    if tower is None or tower.max_num_tiles is None or tower.num_position_embeddings is None:
        return 0
    return tower.max_num_tiles * tower.num_position_embeddings


def _conv_dim(spec: "ModelSpec") -> int:
    """Channels of a linear layer's depthwise convolution: q and k (or B and C), and v (or x)."""
    return 2 * spec.linear_num_key_heads * spec.linear_key_head_dim + \
        spec.linear_num_value_heads * spec.linear_value_head_dim


def _kv(spec: "ModelSpec", arch: str, kind: "LayerKind", elem: float) -> Tuple[int, int, int]:
    """``(per token, state, per encoder token)`` bytes of one layer.

    A bidirectional encoder layer caches nothing: it runs once over its input, and a decoder's cross-attention
    caches the keys and values it reads from the encoder's output.
    """
    kv_heads = spec.num_key_value_heads or spec.num_attention_heads
    if kind.attention == "none" or _bidirectional(arch, kind.name):
        return 0, 0, 0
    if kind.attention == "linear":
        state = spec.linear_num_value_heads * spec.linear_key_head_dim * spec.linear_value_head_dim + \
            _conv_dim(spec) * spec.linear_conv_kernel_dim
        return 0, int(state * elem), 0
    if kind.attention == "ssm":
        state = _ssm_width(spec) * spec.ssm_state_size + _ssm_conv_dim(spec) * spec.ssm_conv_kernel
        return 0, int(state * elem), 0
    if kind.attention == "mla":
        return int((spec.kv_lora_rank + spec.qk_rope_head_dim) * elem), 0, 0
    if kind.attention == "cross":  # the image's keys and values, cached once per sequence (its length aside)
        return 0, int(2 * kv_heads * spec.effective_head_dim * image_tokens(spec) * elem), 0
    per_token = int(2 * kv_heads * spec.effective_head_dim * elem)
    cross = per_token * (kind.ops.attBMM // 2 - 1) if kind.ops.attBMM > 2 else 0
    return per_token, 0, cross


#: One layer's figures at a sequence length: ``(weights, dense, causal, kv per token, kv window, state, encoder
#: kv per token)``, as :class:`GroupFlops` holds them for a group of one layer.
_Layer = Tuple[int, int, int, int, Optional[int], int, int]


def _layer(spec: "ModelSpec", arch: str, kind: "LayerKind", seq_len: int, symbols: Mapping[str, Any],
           elem: float) -> _Layer:
    """One layer of *kind*'s figures at *seq_len*."""
    weights = _weight_flops(spec, kind, symbols, seq_len)
    if kind.attention == "linear":
        dense, causal = _linear(spec, arch, seq_len)
    elif kind.attention == "ssm":
        dense, causal = _ssm(spec, arch, seq_len)
    else:
        dense, causal = _softmax(spec, arch, kind, seq_len)
    per_token, state, cross = _kv(spec, arch, kind, elem)
    window = spec.sliding_window - 1 if kind.attention == "sliding" else None
    if kind.attention == "chunked":  # cache_utils.py: a chunked layer's cache is a sliding one of the chunk's size
        window = spec.attention_chunk_size - 1
    return weights, dense, causal, per_token, window, state, cross


class _KindFigures:
    """One spec's per-layer figures, each computed once however many groups read it: per distinct kind and
    sequence length, :func:`_layer`; the MTP extras' and the head's matmul weights, whatever the length
    (:func:`_model_params`). The same figures :func:`model_flops` computes group by group without it."""

    def __init__(self, spec: "ModelSpec", profile: "OpProfile", arch: str) -> None:
        self.spec, self.profile, self.arch = spec, profile, arch
        self.symbols = model_symbols(spec)
        self.elem = dtype_bytes(spec)
        self._layers: Dict[Tuple[int, int], Tuple["LayerKind", _Layer]] = {}
        self._model: Optional[Tuple[int, int]] = None

    def layer(self, kind: "LayerKind", seq_len: int) -> _Layer:
        """:func:`_layer` of *kind* at *seq_len* (the kind held here, so its ``id`` names it while this lives)."""
        known = self._layers.get((id(kind), seq_len))
        if known is None:
            known = self._layers[id(kind), seq_len] = (kind, _layer(self.spec, self.arch, kind, seq_len,
                                                                    self.symbols, self.elem))
        return known[1]

    def model(self) -> Tuple[int, int]:
        """:func:`_model_params` of the profile."""
        if self._model is None:
            self._model = _model_params(self.profile, self.symbols)
        return self._model


def _group(spec: "ModelSpec", arch: str, group: "StackGroup", seq_len: int, symbols: Mapping[str, Any],
           elem: float, kinds: Optional[_KindFigures] = None) -> GroupFlops:
    """One group's figures at *seq_len* (its kind's from *kinds* when given, else computed here)."""
    kind = group.kind
    weights, dense, causal, per_token, window, state, cross = \
        _layer(spec, arch, kind, seq_len, symbols, elem) if kinds is None else kinds.layer(kind, seq_len)
    n = group.count
    return GroupFlops(kind.name, n, group.mtp, kind.attention, n * weights, n * dense, n * causal, n * per_token,
                      window, n * state, n * cross)


def model_flops(spec: "ModelSpec", profile: "OpProfile", stack: "LayerStack", seq_len: int,
                total_parameters: int = 0, kinds: Optional[_KindFigures] = None) -> ModelFlops:
    """The FLOPs of one forward over *seq_len* tokens, and the bytes, from the resolved stack.

    Args:
        spec: The model.
        profile: Its op profile (its ``mtp_weights`` add to the MTP layers).
        stack: Its resolved stack.
        seq_len: Tokens in the sequence, at least 1.
        total_parameters: The model's ``total`` parameters, for the weight bytes.
        kinds: This spec's and profile's per-layer figures, each kind's computed once per length however many
            groups hold it, and shared across lengths (:func:`flops_document`); ``None``: computed group by group.

    Raises:
        Unpriced: If an inventory reads a field the spec leaves out.
        ValueError: If *seq_len* is below 1.
    """
    if seq_len < 1:
        raise ValueError(f"a sequence length is at least 1 token, got {seq_len}")
    symbols = model_symbols(spec) if kinds is None else kinds.symbols
    elem = dtype_bytes(spec)
    groups = [_group(spec, stack.arch, group, seq_len, symbols, elem, kinds) for group in stack.groups]
    mtp_active, other = _model_params(profile, symbols) if kinds is None else kinds.model()
    extra = 2 * seq_len * mtp_active
    groups = [g if not g.mtp else _with_extra(g, g.count * extra) for g in groups]
    head = 2 * seq_len * spec.vocab_size * spec.hidden_size
    head += 2 * seq_len * other
    return ModelFlops(seq_len, tuple(groups), head, spec.torch_dtype or DEFAULT_DTYPE, int(total_parameters * elem))


def _model_params(profile: "OpProfile", symbols: Mapping[str, Any]) -> Tuple[int, int]:
    """``(MTP extras, head)``: the matmul weights one token passes through in an MTP layer's own extras
    (``mtp_weights``, 0 without) and in the model's ``other`` matmuls besides the vocabulary's head."""
    mtp_active = _matmul_active(profile.mtp_weights, symbols, 0) if profile.mtp_weights else 0
    other = sum(params for part, _, params, matmul in sizes(profile.model_weights, symbols)
                if matmul and part == "other")
    return mtp_active, other


def _with_extra(group: GroupFlops, weights: int) -> GroupFlops:
    """*group* with *weights* more matmul FLOPs (an MTP layer's own projection)."""
    return GroupFlops(group.kind, group.count, group.mtp, group.attention, group.weights + weights, group.dense,
                      group.causal, group.kv_per_token, group.kv_window, group.state, group.encoder_per_token)


def tower_flops_per_patch(spec: "ModelSpec", profile: "OpProfile", tower: "LayerStack") -> int:
    """The vision tower's weight-matmul FLOPs per image patch token (its blocks, patch embedding and projector).

    The tower's attention over an image's patches grows with the image, not the text, and is left out.

    Raises:
        Unpriced: If the tower's inventory reads a field the spec leaves out.
    """
    symbols = tower_symbols(spec.vision, spec.hidden_size)
    blocks = sum(group.count * _matmul_active(profile.vision_kinds.get(group.kind.name, NONE), symbols, 0)
                 for group in tower.groups)
    return 2 * (blocks + _matmul_active(profile.vision_weights, symbols, 0))


def artifact_seq_lens(spec: "ModelSpec") -> Tuple[int, ...]:
    """The sequence lengths an artifact states: :data:`DEFAULT_SEQ_LENS` and ``max_position_embeddings``."""
    lens = set(DEFAULT_SEQ_LENS)
    if spec.max_position_embeddings:
        lens.add(spec.max_position_embeddings)
    return tuple(sorted(lens))


def flops_document(spec: "ModelSpec", profile: "OpProfile", stack: "LayerStack", tower: Optional["LayerStack"],
                   total_parameters: int) -> Dict[str, Any]:
    """The artifact's ``flops`` block: the conventions, each default length's figures, the bytes.

    Raises:
        Unpriced: As :func:`model_flops`.
    """
    kinds = _KindFigures(spec, profile, stack.arch)
    at = [model_flops(spec, profile, stack, n, total_parameters, kinds) for n in artifact_seq_lens(spec)]
    first = at[0]
    return {
        "conventions": {"dense": "every (query, key) pair of the score matrix: FlopCounterMode, torchtitan",
                        "causal": "only the pairs the mask keeps: Megatron-LM, MaxText",
                        "fma": 2, "training": "3 x forward"},
        "at": [figures.to_dict() for figures in at],
        "dtype": first.dtype,
        "weight_bytes": first.weight_bytes,
        "kv_cache": [{"kind": g.kind, "count": g.count, "mtp": g.mtp, "bytes_per_token": g.kv_per_token,
                      "window": g.kv_window, "state_bytes": g.state, "encoder_bytes_per_token": g.encoder_per_token} for g in first.groups],
        "kv_bytes_per_token": first.kv_per_token(),
        "state_bytes": first.state_bytes(),
        "vision_per_patch": None if tower is None or spec.vision is None else
        tower_flops_per_patch(spec, profile, tower),
    }
