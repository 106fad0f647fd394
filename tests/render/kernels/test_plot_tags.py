"""Multi-input roofline labels keep the part of each input's name that differs."""

from ridgeline.render.plots import distinct_tags, label_text


def test_common_prefix_and_suffix_are_cut_at_separators():
    assert distinct_tags(["decode-b1-h100", "decode-b8-h100", "decode-b256-h100"]) == ["b1", "b8", "b256"]
    assert distinct_tags(["profile_h100.csv", "profile_h200.csv"]) == ["h100", "h200"]


def test_labels_that_do_not_differ_or_stand_alone_are_kept_whole():
    assert distinct_tags(["run1", "run1"]) == ["run1", "run1"]
    assert distinct_tags(["only-one"]) == ["only-one"]
    # no shared part at a separator boundary: nothing is cut mid-word
    assert distinct_tags(["batch8", "batch16"]) == ["batch8", "batch16"]


def test_label_text_tags_the_kernel_with_its_input():
    assert label_text("flash_fwd_splitkv_kernel", "b256") == "flash_fwd_splitkv_kernel [b256]"
