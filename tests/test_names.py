"""One kernel, one name, across tools (ridgeline.names; issue 20 item 8; docs/names.md).

Name pairs come from ../shared/NCU-FORMATS.md 4.2b (ncu vs Nsight Systems spellings of one
kernel) and from the shared samples (the names are copied as the files write them; the files
themselves are read in place and the tests that read them skip when ../shared/samples is absent).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ridgeline.names import distinct_labels, function_name, join_key, match_names, parse, short_name

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "samples"

# ---------------------------------------------------------------- return types and odd forms
# (name, short name, function name): the short name is the function, never the return type
SHORT = [
    ("void gemm_v0<float>(T1 *, T1 *, T1 *, int, int, int)", "gemm_v0", "gemm_v0"),
    ("enable_if<!T7, void>::type kernel<int, int, float, 0, 7>(T13, T6, T6)", "kernel", "kernel"),
    ("std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, float, (bool)0, (int)7>(T13, T6, T6)",
     "internal::gemvx::kernel", "kernel"),
    ("std::enable_if<(bool)1, void>::type ns::k<1>(int)", "ns::k", "k"),
    ("T1 *make_ptr<float>(int)", "make_ptr", "make_ptr"),
    ("const float &ref_kernel(int)", "ref_kernel", "ref_kernel"),
    ("unsigned int count_kernel<4>(const int *)", "count_kernel", "count_kernel"),
    ("static __global__ void sk(int)", "sk", "sk"),
    ('extern "C" triton_kernel(int)', "triton_kernel", "triton_kernel"),
    ("unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)", "gemm_naive_kernel",
     "gemm_naive_kernel"),
    ("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<double, double, unsigned int, 1, 4>(int)",
     "at::native::fused_dropout_kernel_vec", "fused_dropout_kernel_vec"),
    ("void at::native::<unnamed>::CatArrayBatchedCopy<at::native::<unnamed>::OpaqueType<(unsigned int)2>, unsigned int>(T1 *)",
     "at::native::CatArrayBatchedCopy", "CatArrayBatchedCopy"),
    # a lambda inside the template arguments: its '()', '[...]' and 'operator ()' stay inside
    ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::silu_kernel(at::TensorIteratorBase &)::"
     "[lambda() (instance 1)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
     "at::native::vectorized_elementwise_kernel", "vectorized_elementwise_kernel"),
    ("void ns::operator()<int>(int)", "ns::operator()", "operator()"),
    ("void ns::operator<<<float>(float)", "ns::operator<<", "operator<<"),
    ("ampere_sgemm_128x128_tn", "ampere_sgemm_128x128_tn", "ampere_sgemm_128x128_tn"),
    ("cuda_compute_flux(int,int*,float*,float*,float*)", "cuda_compute_flux", "cuda_compute_flux"),
    ("[CUDA memcpy HtoD]", "[CUDA memcpy HtoD]", "[CUDA memcpy HtoD]"),
    ("<script>alert('x')</script>", "<script>alert('x')</script>", "<script>alert('x')</script>"),
]


@pytest.mark.parametrize("name, short, func", SHORT)
def test_short_name_is_the_function_never_the_return_type(name, short, func):
    assert short_name(name) == short
    assert function_name(name) == func
    assert "enable_if" not in short and not short.startswith(("void", "std::", "const", "unsigned", "T1"))


def test_parse_keeps_the_parts_apart():
    p = parse("std::enable_if<!T7, void>::type internal::gemvx::kernel<int, (int)7>(T13, T6)")
    assert (p.return_type, p.namespace, p.function) == ("std::enable_if<!T7, void>::type", "internal::gemvx", "kernel")
    assert (p.template_args, p.params, p.bare) == ("int, (int)7", "T13, T6", False)
    assert parse("fused_moe_kernel").bare and not parse("f(int)").bare


def test_ncu_short_name_and_timeline_short_name_use_the_one_normaliser():
    from ridgeline.parsers.ncu.csv_reader import short_name as ncu_short

    for name, short, _f in SHORT:
        assert ncu_short(name) == short


# ---------------------------------------------------------------- one kernel in two tools
# (ncu spelling, Nsight Systems / Kineto spelling, how they are paired)
PAIRS = [
    # NCU-FORMATS 4.2b: cuBLAS GEMV (RTX 5090: ncu profile vs nsys summary of the same run)
    ("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, 0, 1, 1, 0, 7, 0, "
     "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<const "
     "__nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13, T6, T6)",
     "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, "
     "(bool)0, (bool)1, (bool)1, (bool)0, (int)7, (bool)0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const "
     "__nv_bfloat16>, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, "
     "float>>(T13, T6, T6)", "key"),
    # NCU-FORMATS 4.2b: FlashAttention-2 (ncu: no namespace, bare literals and true/false)
    ("void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, "
     "Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, true>(Flash_fwd_params)",
     "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<(int)128, (int)64, (int)128, (int)4, (bool)0, (bool)0, "
     "cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)64, (int)128, (int)4, cutlass::bfloat16_t>>, (bool)0, "
     "(bool)1>(Flash_fwd_params)", "key"),
    # samples: ncu 2026.2.1 (moeresearch H200) vs nsys (moeresearch H200 vLLM) ATen fill
    ("void at::vectorized_elementwise_kernel<4, at::FillFunctor<int>, std::array<char *, 1>>(int, T2, T3)",
     "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<int>, std::array<char *, "
     "(unsigned long)1>>(int, T2, T3)", "key"),
    # samples: CUTLASS grouped GEMM, ncu drops every namespace and the enum casts
    ("void device_kernel<GemmUniversal<GroupProblemShape<tuple<long, long, long>>, CollectiveMma<MMA_Atom<"
     "MMA_64x16x16_F32BF16BF16_SS<0, 0, 1, 1>>, LinearCombination<bfloat16_t, float, void, float, 2>>>>(T1::Params)",
     "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<long, "
     "long, long>>, cutlass::gemm::collective::CollectiveMma<cute::MMA_Atom<cute::SM90::GMMA::MMA_64x16x16_F32BF16BF16_SS<"
     "(cute::SM90::GMMA::Major)0, (cute::SM90::GMMA::Major)0, (cute::SM90::GMMA::ScaleIn)1, (cute::SM90::GMMA::ScaleIn)1>>, "
     "cutlass::epilogue::thread::LinearCombination<cutlass::bfloat16_t, float, void, float, "
     "(cutlass::FloatRoundStyle)2>>>>(T1::Params)", "key"),
    # samples: NCU-FORMATS 2.4, '<unnamed>::' printed as 'unnamed>::' by ncu; older tools write '(anonymous namespace)'
    ("unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)",
     "(anonymous namespace)::gemm_naive_kernel(const float *, const float *, float *, int, int, int)", "exact"),
    # samples: the xplacer V100 files: function-only (nv-nsight-cu-cli 2019) vs signature
    ("cuda_compute_flux", "cuda_compute_flux(int,int*,float*,float*,float*)", "function"),
    # Triton: bare in every tool
    ("fused_moe_kernel", "fused_moe_kernel", "exact"),
    # Kineto keeps what nsys keeps: CUTLASS 2 kernel with the cutlass:: namespace
    ("void Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(T1::Params)",
     "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(T1::Params)", "key"),
]


@pytest.mark.parametrize("ncu, other, how", PAIRS)
def test_one_kernel_in_two_spellings_is_joined(ncu, other, how):
    m = match_names([ncu], [other])
    assert m.pairs == {ncu: other} and m.how[ncu] == how
    assert function_name(ncu) == function_name(other)
    if how != "function":
        assert join_key(ncu) == join_key(other)


def test_all_pairs_at_once_join_one_to_one():
    ncu = [a for a, _b, _h in PAIRS]
    other = [b for _a, b, _h in PAIRS]
    m = match_names(ncu, other)
    assert m.pairs == dict(zip(ncu, other))
    assert not m.unmatched_left and not m.unmatched_right and not m.ambiguous_left


def test_different_template_arguments_are_different_kernels():
    six = "enable_if<!T7, void>::type kernel<int, float, 0, 6>(T13)"
    seven = "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, float, (bool)0, (int)7>(T13)"
    m = match_names([six], [seven])
    assert not m.pairs and m.unmatched_left == [six] and m.unmatched_right == [seven]


def test_a_bare_name_with_several_candidates_is_ambiguous_not_guessed():
    bare = "kernel"
    cands = ["internal::gemvx::kernel<int, (int)6>(T13)", "internal::gemvx::kernel<int, (int)7>(T13)"]
    m = match_names([bare], cands)
    assert not m.pairs
    assert m.ambiguous_left == {bare: cands}
    assert sorted(m.ambiguous_right) == cands
    # one candidate: the bare name is that kernel
    m = match_names([bare], cands[:1])
    assert m.pairs == {bare: cands[0]} and m.how[bare] == "function"


def test_same_key_twice_on_one_side_is_ambiguous():
    a, b = "void a::foo<1>(int)", "void b::foo<1>(int)"
    m = match_names([a, b], ["void c::foo<(int)1>(int)"])
    assert not m.pairs and set(m.ambiguous_left) == {a, b}
    # an exact spelling on both sides still pairs first
    m = match_names([a, b], ["void a::foo<(int)1>(int)", "void b::foo<1>(int)"])
    assert m.pairs == {a: "void a::foo<(int)1>(int)", b: "void b::foo<1>(int)"}


# ---------------------------------------------------------------- labels
def test_labels_that_collide_get_the_part_that_differs():
    six = "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, float, (bool)0, (int)6>(T13)"
    seven = "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, float, (bool)0, (int)7>(T13)"
    assert distinct_labels(["cuBLAS gemvx", "cuBLAS gemvx"], [six, seven], 48) == ["cuBLAS gemvx <6>", "cuBLAS gemvx <7>"]
    # a tile shape cut off by the label limit: the differing tail comes back, the label stays in the limit
    a = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize1x1x1_execute_segment_k_off_kernel"
    b = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel"
    out = distinct_labels(["cuBLAS sm90 xmma gemm bf16 128x256 tn"] * 2, [a, b], 48)
    assert len(set(out)) == 2 and all(len(x) <= 48 for x in out)
    assert out[0].endswith("warpgroupsize1x1x1") and out[1].endswith("warpgroupsize2x1x1")


def test_family_columns_shows_the_gemv_pair_of_the_rtx5090_timeline_apart():
    import polars as pl

    from ridgeline.analyzer.kernels.families import LABEL_MAX, family_columns

    six, seven = PAIRS[0][1].replace("(int)7", "(int)6"), PAIRS[0][1]
    out = family_columns(pl.DataFrame({"kernel_name": [seven, six, seven]}))
    labels = out["kernel_label"].to_list()
    assert labels == ["cuBLAS gemvx <7>", "cuBLAS gemvx <6>", "cuBLAS gemvx <7>"]
    assert all(len(x) <= LABEL_MAX for x in labels)


hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_RET = st.sampled_from(["", "void ", "enable_if<!T7, void>::type ", "std::enable_if<!T7, void>::type ", "T1 *",
                        "unsigned int "])
_NS = st.sampled_from(["", "at::native::", "cutlass::", "flash::", "(anonymous namespace)::", "internal::gemvx::"])
_FN = st.sampled_from(["kernel", "device_kernel", "splitKreduce_kernel", "flash_fwd_splitkv_kernel",
                       "vectorized_elementwise_kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize1x1x1_execute_segment_k_off_kernel",
                       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel",
                       "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "nvjet_tst_64x8_64x16_2x1_v_bz_TNT"])
_ARG = st.sampled_from(["int", "float", "(int)4", "(int)7", "(bool)0", "(bool)1", "cutlass::bfloat16_t",
                        "cute::tuple<cute::C<(int)128>, cute::C<(int)64>, cute::C<(int)64>>", "Policy<(int)2>"])
_TARGS = st.one_of(st.just(None), st.lists(_ARG, min_size=1, max_size=5))
_PARAMS = st.sampled_from([None, "T1::Params", "int, T2, T3", "Flash_fwd_params"])


@st.composite
def _names(draw):
    targs = draw(_TARGS)
    params = draw(_PARAMS)
    name = draw(_RET) + draw(_NS) + draw(_FN)
    if targs is not None:
        name += "<" + ", ".join(targs) + ">"
    if params is not None:
        name += f"({params})"
    return name


@settings(max_examples=150, deadline=None)
@given(st.lists(_names(), min_size=1, max_size=12, unique=True))
def test_distinct_names_never_share_a_displayed_label(names):
    import polars as pl

    from ridgeline.analyzer.kernels.families import LABEL_MAX, family_columns

    out = family_columns(pl.DataFrame({"kernel_name": names}))
    labels = dict(zip(out["kernel_name"], out["kernel_label"]))
    assert len(set(labels.values())) == len(names)
    assert all(0 < len(v) <= LABEL_MAX for v in labels.values())
    assert not any(v.startswith(("enable_if", "std::enable_if", "void ")) for v in labels.values())


@settings(max_examples=150, deadline=None)
@given(st.lists(_names(), min_size=1, max_size=8, unique=True))
def test_a_name_set_joins_itself_one_to_one(names):
    m = match_names(names, names)
    # every name pairs with itself, unless its spelling normalises like another name of the set
    for n in names:
        assert m.pairs.get(n, n) == n
    assert len(m.pairs) + len(m.ambiguous_left) == len(names)


# ---------------------------------------------------------------- the join on a profile + timeline pair
def _write_profile(tmp_path, names_durations):
    """A raw-page ncu CSV with names and durations only (the documented raw layout, NCU-FORMATS 1)."""
    lines = ['"ID","Kernel Name","Device","gpu__time_duration.sum","dram__bytes.sum"', '"","","","nsecond","byte"']
    for i, (name, dur) in enumerate(names_durations):
        lines.append('"{}","{}","0","{}","1000000"'.format(i, name.replace('"', '""'), dur))
    p = tmp_path / "profile.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def _write_kern_sum(tmp_path, rows):
    """An `nsys stats -r cuda_gpu_kern_sum --format csv` table (the sample's header, NCU-FORMATS/nsys MANIFEST)."""
    lines = ["Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"]
    total = sum(t for _n, t, _c in rows)
    for name, t, c in rows:
        avg = t / c
        lines.append(f'{100 * t / total:.1f},{t},{c},{avg:.1f},{avg:.1f},{int(avg)},{int(avg)},0.0,"{name}"')
    p = tmp_path / "run_cuda_gpu_kern_sum.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_rtx5090_style_profile_joins_its_nsys_summary(tmp_path):
    """The issue's case: ncu names (no namespaces, return type first) against nsys's: 3 of 3."""
    from ridgeline.pipeline import analyze_paths

    gemv, flash, cutlass = (PAIRS[0], PAIRS[1], PAIRS[7])
    prof = _write_profile(tmp_path, [(gemv[0], 20000), (flash[0], 50000), (cutlass[0], 30000)])
    tl = _write_kern_sum(tmp_path, [(gemv[1], 4_000_000, 200), (flash[1], 1_000_000, 20), (cutlass[1], 500_000, 10),
                                    ("void other_kernel<(int)1>(int)", 100_000, 1)])
    res = analyze_paths([prof, tl], gpu="h100-sxm")
    j = res.timeline.join
    assert j.height == 3 and sorted(j["match"].to_list()) == ["key", "key", "key"]
    assert res.timeline.unmatched_profile == [] and res.timeline.unmatched_timeline == ["other_kernel"]
    assert any("3 of 3 profiled kernel name(s) matched" in n for n in res.notes)
    # the summary has no capture: busy shares, total_s / sum of kernel time
    row = j.filter(j["kernel_name"] == gemv[0]).row(0, named=True)
    assert row["busy_share"] == pytest.approx(4_000_000 / 5_600_000)
    assert row["timeline_name"] == gemv[1]


def test_join_reports_what_did_not_match(tmp_path, capsys):
    from ridgeline.cli import main

    six = PAIRS[0][0].replace(", 7, 0, cublas", ", 6, 0, cublas")  # a GEMV the timeline never ran
    prof = _write_profile(tmp_path, [(six, 10000), (PAIRS[1][0], 50000)])
    tl = _write_kern_sum(tmp_path, [(PAIRS[0][1], 4_000_000, 200), (PAIRS[1][1], 1_000_000, 20)])
    with pytest.raises(SystemExit) as ex:
        main(["analyze", str(prof), str(tl), "--gpu", "h100-sxm", "--format", "json"])
    code = ex.value.code
    doc = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    j = doc["timeline"]["join"]
    assert (j["profiled_kernels"], j["matched_count"]) == (2, 1)
    assert j["unmatched_profile"] == ["kernel"] and j["unmatched_timeline"] == ["internal::gemvx::kernel"]
    assert any("1 of 2 profiled kernel name(s) matched" in n and "kernel" in n for n in doc["notes"])


@pytest.mark.skipif(not (SAMPLES / "ncu").is_dir() or not (SAMPLES / "nsys").is_dir(), reason="shared samples not available")
def test_h200_grouped_gemm_profile_joins_the_same_runs_nsys_summary():
    """moeresearch H200 vLLM MoE: the ncu CUTLASS grouped GEMM (namespaces and enum casts dropped)
    is the nsys summary's cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<...>> (before: 0 of 1)."""
    from ridgeline.pipeline import analyze_paths

    prof = SAMPLES / "ncu" / "moeresearch-h200-vllm-cutlass-grouped-gemm-NAMEDraw-details-prof-preamble.csv"
    tl = SAMPLES / "nsys" / "moeresearch-h200-vllm-moe-AT_OFF_CG_ON_cuda_gpu_kern_sum.csv"
    if not prof.exists() or not tl.exists():
        pytest.skip("sample pair not available")
    res = analyze_paths([prof, tl])
    j = res.timeline.join
    assert j.height == 1 and j["match"].to_list() == ["key"]
    assert j["timeline_name"][0].startswith("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<")


def _ncu_samples():
    if not SAMPLES.is_dir():
        return []
    return sorted(p for d in ("ncu", "ncu-rep") for p in (SAMPLES / d).glob("*") if p.suffix in (".csv", ".ncu-rep"))


@pytest.mark.skipif(not _ncu_samples(), reason="shared samples not available")
@pytest.mark.parametrize("path", _ncu_samples(), ids=lambda p: p.name)
def test_every_sample_shows_distinct_names_distinctly(path):
    from ridgeline.errors import InputError
    from ridgeline.pipeline import analyze_paths

    try:
        res = analyze_paths([path])
    except InputError:
        pytest.skip("not readable as a profile (its own test says why)")
    k = res.kernels
    if k is None or not k.height:
        return
    pairs = k.select("kernel_name", "kernel_label").unique()
    assert pairs["kernel_label"].n_unique() == pairs["kernel_name"].n_unique()
    assert not any(str(s).startswith(("enable_if", "std::enable_if")) for s in k["short_name"].to_list())


def test_nsys_summary_rows_of_two_kernels_read_apart(tmp_path, capsys):
    """Both GEMVs of a summary have the short name internal::gemvx::kernel; their labels differ."""
    from ridgeline.cli import main

    six = PAIRS[0][1].replace("(int)7", "(int)6")
    tl = _write_kern_sum(tmp_path, [(PAIRS[0][1], 4_000_000, 200), (six, 1_000_000, 20)])
    with pytest.raises(SystemExit):
        main(["analyze", str(tl), "--format", "json"])
    totals = json.loads(capsys.readouterr().out)["timeline"]["totals"]
    assert {r["short_name"] for r in totals} == {"internal::gemvx::kernel"}
    assert sorted(r["kernel_label"] for r in totals) == ["cuBLAS gemvx <6>", "cuBLAS gemvx <7>"]
    with pytest.raises(SystemExit):
        main(["analyze", str(tl)])
    out = capsys.readouterr().out
    assert "cuBLAS gemvx <7>" in out and "cuBLAS gemvx <6>" in out


_NSYS_5090 = SAMPLES / "nsys" / "codegandee-rtx5090-dsocr-all-stage_summary_cuda_gpu_kern_sum.csv"


@pytest.mark.skipif(not _NSYS_5090.exists(), reason="shared samples not available")
def test_rtx5090_nsys_summary_names_every_kernel_distinctly():
    from ridgeline.pipeline import analyze_paths

    res = analyze_paths([_NSYS_5090])
    t = res.timeline.totals
    names = t.filter(t["category"] == "kernel")["name"].unique().to_list()
    labels = res.timeline.totals_labels
    assert len({labels[n] for n in names}) == len(names)


def test_timeline_kernels_are_one_row_per_name_with_distinct_labels(tmp_path):
    """A Kineto trace with two GEMV instantiations: two rows (not one merged short name), two labels."""
    from ridgeline.pipeline import analyze_paths

    six = PAIRS[0][1].replace("(int)7", "(int)6")
    events, ts = [], 0.0
    for name, dur, n in ((PAIRS[0][1], 30.0, 3), (six, 10.0, 2)):
        for _ in range(n):
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                           "args": {"device": 0, "stream": 7, "correlation": len(events)}})
            ts += dur + 1.0
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    k = analyze_paths([trace], run_rules=False).timeline.kernel_shares
    rows = {r["name"]: r for r in k.iter_rows(named=True)}
    assert set(rows) == {PAIRS[0][1], six}
    assert {r["short_name"] for r in rows.values()} == {"internal::gemvx::kernel"}
    assert rows[PAIRS[0][1]]["kernel_label"] == "cuBLAS gemvx <7>" and rows[six]["kernel_label"] == "cuBLAS gemvx <6>"
    assert (rows[PAIRS[0][1]]["launches"], rows[six]["launches"]) == (3, 2)
    assert rows[PAIRS[0][1]]["total_s"] == pytest.approx(90e-6) and rows[six]["total_s"] == pytest.approx(20e-6)
