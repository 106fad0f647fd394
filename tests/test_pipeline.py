"""analyze_paths: folders, content detection, classification, GPU matching, rules."""

import pytest

from ridgeline.errors import InputError, UsageError
from ridgeline.pipeline import analyze_paths, expand_paths
from ridge_inputs import SCENARIOS, write_mini_ncu


@pytest.fixture
def mini(tmp_path):
    return write_mini_ncu(tmp_path / "profile.csv")


def test_end_to_end_on_a_small_export(mini):
    r = analyze_paths([mini])
    assert [i.kind for i in r.inputs] == ["ncu-raw"]
    assert r.gpu_name == "H100 SXM"
    assert "NVIDIA H100 80GB HBM3" in r.gpu_match
    assert r.kernels.height == 3
    assert r.total_gpu_time_s == pytest.approx(20e-6 + 1e-3 + 20e-6)
    bounds = dict(zip(r.kernels.get_column("short_name"), r.kernels.get_column("bound")))
    assert bounds == {"gemv": "memory", "gemm": "compute"}
    assert r.summary.height == 2
    assert r.summary.row(0, named=True)["short_name"] == "gemm"  # most time first
    assert r.summary.row(0, named=True)["time_share"] == pytest.approx(1e-3 / 1.04e-3)
    assert {x.source for x in r.roofs} == {"catalogue"}
    assert isinstance(r.findings, list)
    assert r.windows is None


def test_gpu_option_never_relabels_a_gpu_the_export_names(mini):
    with pytest.raises(UsageError, match=r"--gpu A100 \(A100 SXM 80GB\) contradicts .*'NVIDIA H100 80GB HBM3' \(H100 SXM\)"):
        analyze_paths([mini], gpu="A100")
    # naming the same GPU is fine
    r = analyze_paths([mini], gpu="h100")
    assert set(r.kernels.get_column("gpu")) == {"H100 SXM"}


def test_gpu_option_names_the_gpu_of_an_export_that_does_not(tmp_path):
    from ridge_inputs import write_mini_ncu

    unnamed = write_mini_ncu(tmp_path / "p.csv", device="")  # records CC 9.0
    r = analyze_paths([unnamed], gpu="H100")
    assert r.gpu_name == "H100 SXM"
    assert "most common" in r.gpu_match
    assert set(r.kernels.get_column("gpu")) == {"H100 SXM"}
    # a GPU of another compute capability than the export records is refused, naming both
    with pytest.raises(UsageError, match=r"A100 SXM 80GB, compute capability 8\.0\) contradicts the export, "
                                         r"which records compute capability 9\.0"):
        analyze_paths([unnamed], gpu="A100")
    # an export naming a GPU the catalogue does not know: --gpu maps it, and says so
    odd = write_mini_ncu(tmp_path / "q.csv", device="NVIDIA Lab GPU")  # no such catalogue entry
    r = analyze_paths([odd], gpu="H100")
    assert set(r.kernels.get_column("gpu")) == {"H100 SXM"} and "does not know" in r.gpu_match


def test_bad_gpu_fails_before_reading_files(tmp_path):
    with pytest.raises(UsageError, match="unknown GPU"):
        analyze_paths([tmp_path / "does-not-exist.csv"], gpu="Voodoo5")


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        analyze_paths([tmp_path / "nope.csv"])


def test_explicit_unknown_file_names_the_expected_formats(tmp_path):
    bad = tmp_path / "table.csv"
    bad.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(InputError) as err:
        analyze_paths([bad])
    text = str(err.value)
    assert "table.csv" in text and "Nsight Compute" in text and "\n" not in text


def test_folder_is_expanded_sorted_and_strays_are_listed_as_skipped(tmp_path):
    write_mini_ncu(tmp_path / "b.csv")
    write_mini_ncu(tmp_path / "a.csv")
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / ".hidden").write_text("x")
    files = [p.name for p, explicit in expand_paths([tmp_path])]
    assert files == ["README.md", "a.csv", "b.csv"]
    r = analyze_paths([tmp_path])
    assert [i.path.rsplit("/", 1)[-1] for i in r.inputs] == ["a.csv", "b.csv"]
    assert r.kernels.height == 6
    assert [s.source.rsplit("/", 1)[-1] for s in r.skipped] == ["README.md"]
    assert "not an ncu export" in r.skipped[0].reason


def test_folder_without_any_known_file_is_an_error(tmp_path):
    (tmp_path / "README.md").write_text("# notes\n")
    with pytest.raises(InputError, match="none found"):
        analyze_paths([tmp_path])


def test_select_and_ignore_reach_the_rules(mini):
    everything = analyze_paths([mini])
    codes = {f.code for f in everything.findings}
    if not codes:
        pytest.skip("no rule fired on the small export")
    first = sorted(codes)[0]
    ignored = analyze_paths([mini], ignore=[first])
    assert first not in {f.code for f in ignored.findings}
    only = analyze_paths([mini], select=[first])
    assert {f.code for f in only.findings} == {first}


def test_unknown_device_adds_a_note_and_unknown_bounds(tmp_path):
    path = write_mini_ncu(tmp_path / "p.csv", device="Imaginary GPU 9000")
    r = analyze_paths([path])
    assert r.gpu_name is None
    assert set(r.kernels.get_column("bound")) == {"unknown"}
    assert any("not in the GPU catalogue" in n for n in r.notes)


@pytest.mark.skipif(not (SCENARIOS / "telemetry-fleet").is_dir(), reason="fixtures not generated")
def test_telemetry_inputs_fill_windows():
    r = analyze_paths([SCENARIOS / "telemetry-fleet"], window="5m")
    assert r.kernels is None
    assert r.windows is not None and r.windows.height > 0
    assert r.telemetry is not None and r.telemetry.height > 0


def test_compute_capability_lists_candidates_without_guessing(tmp_path):
    path = write_mini_ncu(tmp_path / "p.csv", device="")
    r = analyze_paths([path])
    assert r.gpu_name is None
    note = next(n for n in r.notes if "compute capability 9.0" in n)
    assert "H100 SXM" in note and "H200" in note and "does not guess" in note
    assert set(r.kernels.get_column("bound")) == {"unknown"}
