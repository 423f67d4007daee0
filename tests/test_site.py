"""``modelspec site``: the pages from the project's catalogue and the fixture repository, exact band counts and
parameter totals, escaping of hostile spec text, deterministic bytes, the folder rules, the diff page, and the same
pages in a real headless Chromium (sorting, screenshots)."""

from __future__ import annotations

import io
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from browser import CHROMIUM, SKIP_REASON, dump_dom, screenshot
from pipeline.catalogue.diff import load_catalogue
from pipeline.check.repo import SpecRepo
from pipeline.catalogue.site import _environment, _model_page, MANIFEST, SiteError, build_site, page_file, parameter_segments, source_header, write_site
from spec_repos import edit, git_repo, make_repo, run, tree

ROOT = Path(__file__).resolve().parents[1]
DEEPSEEK = "specs/deepseek/deepseek-v3.yaml"
HOSTILE = "<script>alert(1)</script>"

needs_browser = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)


class Elements(HTMLParser):
    """Every element of a page as ``(tag, attributes, text inside it up to its first child)``."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: List[Tuple[str, Dict[str, Optional[str]], List[str]]] = []
        self._open: List[List[str]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs) -> None:  # noqa: D102 - HTMLParser's hook
        text: List[str] = []
        self.found.append((tag, dict(attrs), text))
        self._open.append(text)

    def handle_endtag(self, tag: str) -> None:  # noqa: D102 - HTMLParser's hook
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:  # noqa: D102 - HTMLParser's hook
        if self._open:
            self._open[-1].append(data)

    def having(self, tag: str, **attrs: str) -> List[Tuple[Dict[str, Optional[str]], str]]:
        """The elements *tag* whose attributes include *attrs* (``cls`` matches one class), with their text."""
        wanted = attrs.pop("cls", None)
        return [(found, "".join(text)) for name, found, text in self.found if name == tag
                and all(found.get(key) == value for key, value in attrs.items())
                and (wanted is None or wanted in (found.get("class") or "").split())]


@pytest.fixture(scope="module")
def catalogue_site() -> Dict[str, str]:
    """The site of the project's own catalogue, as built in memory."""
    catalogue = load_catalogue(SpecRepo(ROOT), "working tree")
    texts = {doc["path"]: (ROOT / doc["path"]).read_text(encoding="utf-8") for doc in catalogue.models.values()}
    return build_site(catalogue, texts)


def artifact(name: str) -> Dict:
    """The committed artifact ``resolved/<name>.json``."""
    return json.loads((ROOT / "resolved" / f"{name}.json").read_text(encoding="utf-8"))


def committed_models() -> List[str]:
    """Every model the committed index lists."""
    return sorted(entry["name"] for entry in json.loads((ROOT / "resolved" / "index.json").read_text())["artifacts"])


def test_index_lists_every_model(catalogue_site: Dict[str, str]) -> None:
    rows = Elements(catalogue_site["index.html"]).having("tr")
    names = [attrs["data-name"] for attrs, _ in rows if "data-name" in attrs]
    assert names == committed_models()
    assert len(names) == len(list((ROOT / "specs").rglob("*.yaml")))


def test_model_page_bands_and_total(catalogue_site: Dict[str, str]) -> None:
    page = Elements(catalogue_site["models/deepseek-v3.html"])
    bands = page.having("rect", cls="band")
    assert len(bands) == 62
    assert [attrs["data-kind"] for attrs, _ in bands] == ["dense"] * 3 + ["moe"] * 59
    assert [attrs["data-layer"] for attrs, _ in page.having("rect", cls="mtp")] == ["61"]
    assert page.having("td", id="total")[0][1] == f"{artifact('deepseek-v3')['parameters']['total']:,}"
    assert page.having("td", id="total")[0][1] == "671,026,404,352"
    assert page.having("td", id="mtp")[0][1] == "11,610,067,968"


def test_tower_beside_the_body(catalogue_site: Dict[str, str]) -> None:
    page = Elements(catalogue_site["models/qwen2.5-vl-7b-instruct.html"])
    assert len(page.having("rect", cls="band")) == 28
    tower = page.having("rect", cls="tower-band")
    assert len(tower) == artifact("qwen2.5-vl-7b-instruct")["vision"]["layers"]["body"] == 32
    legend = [text for _, text in page.having("td")][:20]
    assert "window_encoder" in legend and "gated_encoder" in legend


def test_parameter_segments_sum_to_every_total() -> None:
    for name in committed_models():
        parameters = artifact(name)["parameters"]
        segments = parameter_segments(parameters)
        if "unpriced" in parameters:
            assert segments is None
            continue
        assert sum(segment["count"] for segment in segments) == parameters["total"], name


def test_parameter_segments_of_deepseek() -> None:
    counts = {segment["key"]: segment["count"] for segment in parameter_segments(artifact("deepseek-v3")["parameters"])}
    # apart: 3 dense MLPs, and 58 layers' routed and shared experts (together the 657,652,187,136 of show's MLP)
    assert 1189085184 + 653908770816 + 2554331136 == 657652187136
    assert counts == {"embedding": 926679040, "position": 0, "attention": 11413547008,
                      "mlp": 1189085184, "routed": 653908770816, "shared": 2554331136, "router": 106430464,
                      "norms": 881664, "vision": 0, "projector": 0, "head": 926679040, "other": 0}


def test_unpriced_model_says_why() -> None:
    # Every catalogue model is counted, so the page of an artifact that says why not is built from a copy.
    document = {**artifact("llama-3.1-8b"),
                "parameters": {"unpriced": "the op profile states no weights for kind 'full_attention'"}}
    page = Elements(_model_page(_environment(), document, None))
    assert page.having("p", cls="unpriced")[0][1] == (
        "Not priced: the op profile states no weights for kind 'full_attention'")


def test_source_header_and_spec_link(catalogue_site: Dict[str, str]) -> None:
    page = Elements(catalogue_site["models/deepseek-v3.html"])
    assert page.having("pre", cls="source")[0][1].startswith("source: deepseek-ai/DeepSeek-V3 config.json")
    link = [attrs["href"] for attrs, _ in page.having("a") if attrs["href"].startswith("../spec/")]
    assert len(link) == 1
    assert f'<a href="{link[0]}"><code>{DEEPSEEK}</code></a>' in catalogue_site["models/deepseek-v3.html"]
    assert catalogue_site[link[0][3:]] == (ROOT / DEEPSEEK).read_text(encoding="utf-8")


def test_source_header() -> None:
    assert source_header("# yaml-language-server: $schema=x\n# source: a\n#  b\n---\nname: x\n# later\n") == \
        "source: a\nb"


def test_self_contained(catalogue_site: Dict[str, str]) -> None:
    for file, text in catalogue_site.items():
        if file.endswith(".html"):
            for attrs, _ in Elements(text).having("script") + Elements(text).having("link"):
                target = attrs.get("src") or attrs.get("href")
                assert "//" not in target and target.endswith(("site.js", "site.css")), (file, target)
            assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "") \
                and "https://" not in text, file


def test_deterministic_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    assert run(ROOT, "site", "--out", str(first)).exit_code == 0
    assert run(ROOT, "site", "--out", str(second)).exit_code == 0
    assert tree(first) == tree(second)
    again = run(ROOT, "site", "--out", str(first))
    assert again.exit_code == 0
    assert again.stdout == (f"site: {len(committed_models())} models, 0 files written, 0 removed, {len(tree(first)) - 1} unchanged in "
                            f"{first}/; open {first / 'index.html'}\n")


def hostile_repo(tmp_path: Path) -> Path:
    """The fixture repository with ``<script>`` in DeepSeek's source header."""
    root = make_repo(tmp_path / "repo")
    path = root / DEEPSEEK
    path.write_text(f"# source: {HOSTILE} & \"quotes\"\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    return root


def test_script_in_source_header_is_text(tmp_path: Path) -> None:
    root = hostile_repo(tmp_path)
    out = tmp_path / "site"
    assert run(root, "site", "--out", str(out)).exit_code == 0
    html = (out / "models" / "deepseek-v3.html").read_text(encoding="utf-8")
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;quotes&#34;" in html
    page = Elements(html)
    assert page.having("pre", cls="source")[0][1].startswith(f"source: {HOSTILE} & \"quotes\"")
    assert [attrs["src"] for attrs, _ in page.having("script")] == ["../site.js"]


def test_name_that_is_no_file_name() -> None:
    assert page_file("deepseek-v3") == "models/deepseek-v3.html"
    assert page_file("../x<script>") == "models/model-" + __import__("hashlib").sha256(b"../x<script>").hexdigest()[:12] + ".html"


def test_write_site_refuses_a_foreign_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SiteError, match="holds files modelspec site did not write"):
        write_site(tmp_path, {"index.html": "x"})
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]
    result = run(ROOT, "site", "--out", str(tmp_path))
    assert result.exit_code == 2
    assert "holds files modelspec site did not write" in result.output


def test_write_site_removes_only_its_own_stale_files(tmp_path: Path) -> None:
    assert write_site(tmp_path, {"index.html": "a", "models/x.html": "x"}) == (["index.html", "models/x.html"], [])
    (tmp_path / MANIFEST).write_text(json.dumps({"files": ["index.html", "models/x.html", "/etc/passwd", "../y"]}))
    assert write_site(tmp_path, {"index.html": "b"}) == (["index.html"], ["models/x.html"])
    assert json.loads((tmp_path / MANIFEST).read_text())["files"] == ["index.html"]


def test_write_site_refuses_a_folder_holding_a_file_it_did_not_write(tmp_path: Path) -> None:
    # issue 25: site --out kept (and the nightly job published) an HTML file it did not write
    assert write_site(tmp_path, {"index.html": "a", "models/x.html": "x"}) == (["index.html", "models/x.html"], [])
    (tmp_path / "models" / "mine.html").write_text("mine", encoding="utf-8")
    with pytest.raises(SiteError) as refused:
        write_site(tmp_path, {"index.html": "b"})
    assert str(refused.value) == (f"{tmp_path} holds files modelspec site did not write (models/mine.html); nothing "
                                  "is written there, since everything in it would be published: remove them, or "
                                  "name an empty or new folder with --out")
    assert (tmp_path / "index.html").read_text() == "a"


def test_write_site_never_writes_through_a_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").symlink_to(elsewhere)
    with pytest.raises(SiteError) as refused:
        write_site(tmp_path / "out", {"index.html": "a"})
    assert str(refused.value).startswith(f"{tmp_path}/out (the site's folder) is a symbolic link; modelspec never "
                                         "writes through one")
    site = tmp_path / "site"
    write_site(site, {"index.html": "a", "models/x.html": "x"})
    (site / "models" / "x.html").unlink()
    (site / "models" / "x.html").symlink_to(elsewhere / "victim.html")
    with pytest.raises(SiteError) as refused:
        write_site(site, {"index.html": "a", "models/x.html": "y"})
    assert str(refused.value).startswith(f"{site}/models/x.html is a symbolic link; modelspec never writes through")
    assert list(elsewhere.iterdir()) == []


def diff_repo(tmp_path: Path) -> Path:
    """The fixture in git, with DeepSeek at one MoE layer fewer and two MTP layers in the working tree."""
    root = git_repo(tmp_path / "repo")
    edit(root / DEEPSEEK, "num_hidden_layers: 61", "num_hidden_layers: 60")
    edit(root / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    return root


def test_diff_page(tmp_path: Path) -> None:
    root = diff_repo(tmp_path)
    out = tmp_path / "site"
    result = run(root, "site", "--out", str(out), "--diff", "main")
    assert result.exit_code == 0, result.output
    page = Elements((out / "diff.html").read_text(encoding="utf-8"))
    assert page.having("p", id="counts")[0][1] == "0 added, 0 removed, 1 changed, 2 unchanged."
    moves = [text for _, text in page.having("td")]
    assert moves[:8] == ["moe", "58", "57", "loss: 1 fewer", "MTP", "1", "2", "gain: 1 more"]
    assert [attrs["class"] for attrs, _ in page.having("tr") if attrs.get("class")][:2] == ["loss", "gain"]
    assert len(page.having("rect", cls="band")) == 62 + 62
    assert 'href="diff.html"' in (out / "index.html").read_text(encoding="utf-8")


def test_diff_of_a_bad_revision(tmp_path: Path) -> None:
    root = diff_repo(tmp_path)
    result = run(root, "site", "--out", str(tmp_path / "site"), "--diff", "no-such-rev")
    assert result.exit_code == 2
    assert not (tmp_path / "site").exists()


@pytest.fixture(scope="module")
def written_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's catalogue site, written, with a diff page against the fixture's edit."""
    root = diff_repo(tmp_path_factory.mktemp("diff"))
    out = tmp_path_factory.mktemp("site") / "site"
    assert run(root, "site", "--out", str(out), "--diff", "main").exit_code == 0
    catalogue = tmp_path_factory.mktemp("catalogue") / "site"
    assert run(ROOT, "site", "--out", str(catalogue)).exit_code == 0
    shutil.copy(out / "diff.html", catalogue / "diff.html")
    return catalogue


@needs_browser
def test_browser_index_lists_every_model_and_sorts(written_site: Path) -> None:
    shown = Elements(dump_dom(written_site / "index.html"))
    assert [attrs["data-name"] for attrs, _ in shown.having("tr") if "data-name" in attrs] == committed_models()
    assert shown.having("p", id="filter-box")[0][0].get("hidden") is None  # the script ran
    by_total = [attrs["data-name"] for attrs, _ in
                Elements(dump_dom(written_site / "index.html", "#sort=total-desc")).having("tr") if "data-name" in attrs]
    assert sorted(by_total) == committed_models()
    assert by_total.index("deepseek-v3") < by_total.index("llama-3.1-8b")
    totals = {name: artifact(name)["parameters"].get("total", -1) for name in by_total}
    assert [totals[name] for name in by_total] == sorted(totals.values(), reverse=True)
    qwen = Elements(dump_dom(written_site / "index.html", "#filter=qwen3%20moe"))
    assert [attrs["data-name"] for attrs, _ in qwen.having("tr") if "data-name" in attrs and "hidden" not in attrs] \
        == ["qwen3-30b-a3b", "qwen3-vl-30b-a3b-instruct", "qwen3.5-35b-a3b"]
    assert qwen.having("span", id="shown")[0][1] == f"3 of {len(committed_models())} shown"
    ascending = [attrs["data-name"] for attrs, _ in
                 Elements(dump_dom(written_site / "index.html", "#sort=total-asc")).having("tr") if "data-name" in attrs]
    assert ascending.index("llama-3.1-8b") < ascending.index("deepseek-v3")


@needs_browser
def test_browser_model_page(written_site: Path) -> None:
    shown = Elements(dump_dom(written_site / "models" / "deepseek-v3.html"))
    assert len(shown.having("rect", cls="band")) == 62
    assert shown.having("td", id="total")[0][1].replace(",", "") == str(artifact("deepseek-v3")["parameters"]["total"])


@needs_browser
def test_browser_hostile_header_is_text(tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert run(hostile_repo(tmp_path), "site", "--out", str(out)).exit_code == 0
    shown = Elements(dump_dom(out / "models" / "deepseek-v3.html"))
    assert [attrs["src"] for attrs, _ in shown.having("script")] == ["../site.js"]
    assert shown.having("pre", cls="source")[0][1].startswith(f"source: {HOSTILE}")


def colours(png: bytes) -> int:
    """How many distinct colours a PNG screenshot holds."""
    from PIL import Image  # pylint: disable=import-outside-toplevel

    with Image.open(io.BytesIO(png)) as image:
        return len(image.convert("RGB").getcolors(maxcolors=1 << 24))


@needs_browser
@pytest.mark.parametrize("page", ["index.html", "models/deepseek-v3.html", "models/qwen2.5-vl-7b-instruct.html",
                                  "diff.html"])
def test_browser_screenshot_is_not_blank(written_site: Path, tmp_path: Path, page: str) -> None:
    png = screenshot(written_site / page, tmp_path / "page.png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert colours(png) > 50, page


def hostile_document(name: str) -> Dict:
    """DeepSeek-V3's artifact with *name* and :data:`HOSTILE` in every other string a spec or profile chooses."""
    document = json.loads(json.dumps(artifact("deepseek-v3")).replace('"moe"', json.dumps(HOSTILE)))
    document.update(name=name, arch=HOSTILE, path=f"specs/{HOSTILE}.yaml")
    document["spec"]["torch_dtype"] = HOSTILE
    return document


def test_every_string_from_a_spec_is_escaped() -> None:
    """Names, the family, kind names and flavours, paths, failing specs' paths and labels: never markup."""
    from pipeline.catalogue.diff import Catalogue, diff_catalogues  # pylint: disable=import-outside-toplevel

    before = Catalogue(HOSTILE, {"x": hostile_document("x")})
    after = Catalogue(HOSTILE, {"x": {**hostile_document("x"), "arch": "deepseek_v3"},
                                HOSTILE: hostile_document(HOSTILE)}, {f"specs/{HOSTILE}2.yaml": HOSTILE})
    files = build_site(after, {f"specs/{HOSTILE}.yaml": f"# {HOSTILE}\nname: x\n"}, diff_catalogues(before, after),
                       (before, after))
    assert sorted(files) == ["diff.html", "index.html", page_file(HOSTILE), "models/x.html",
                             "site.css", "site.js", "spec/" + files_spec(files)]
    for file, text in files.items():
        if file.endswith(".html"):
            assert "<script>alert" not in text, file
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text, file
            assert [attrs["src"] for attrs, _ in Elements(text).having("script")] == \
                [("../" if file.startswith("models/") else "") + "site.js"], file


def files_spec(files: Dict[str, str]) -> str:
    """The one spec copy's file name in *files*."""
    (name,) = [file[len("spec/"):] for file in files if file.startswith("spec/")]
    return name


def test_a_move_is_coloured_by_its_direction_with_the_reason() -> None:
    from pipeline.catalogue.diff import Move
    from pipeline.catalogue.site import move_direction

    assert [move_direction(move) for move in (
        Move("MTP", 1, 0), Move("moe", 58, 60), Move("total", "671.0B", "660.3B"), Move("qkv_bias", False, True),
        Move("vision", event="removed"), Move("vision", event="added"), Move("rope_scaling", None, 8.0))] == [
        ("loss", "1 fewer"), ("gain", "2 more"), ("loss", "smaller"), ("change", "changed"), ("loss", "removed"),
        ("gain", "added"), ("gain", "added")]


def test_values_are_spelled_as_yaml_and_small_shares_as_under_one_percent() -> None:
    from pipeline.catalogue.site import share_text, yaml_text

    assert [yaml_text(value) for value in (False, True, None, 0.0, 4096, 0.5, "bfloat16", "0.0M", "11.6B")] == [
        "false", "true", "null", "0", "4096", "0.5", "bfloat16", "0", "11.6B"]
    assert [share_text(value) for value in (0.0, 0.004, 0.99, 1.0, 12.345, 100.0)] == [
        "0", "<1", "<1", "1", "12.3", "100"]


def test_the_legend_names_mtp_and_tower_layers() -> None:
    from pipeline.catalogue.site import Band, legend_layers

    def band(kind: str, mtp: bool = False) -> Band:
        return Band(0, kind, "full", "moe", mtp, 0, 4, "#000")

    body = [band("moe")] * 58 + [band("dense")] * 3 + [band("moe", True)]
    tower = [band("encoder")] * 27
    assert [legend_layers(kind, body, tower) for kind in ("moe", "dense", "encoder")] == [
        "58 + 1 MTP", "3", "27 (tower)"]


def test_a_state_space_layer_is_drawn_in_its_own_colour_and_named_in_the_legend(
        catalogue_site: Dict[str, str]) -> None:
    page = Elements(catalogue_site["models/mamba-130m-hf.html"])
    bands = page.having("rect", cls="band")
    assert [(attrs["data-kind"], attrs["fill"]) for attrs, _ in bands] == [("mamba", "#1a7f5a")] * 24
    legend = [text for _, text in page.having("td")][:5]
    assert legend == ["", "mamba", "ssm (state-space mixer)", "none", "24"]


def test_a_cross_attention_layer_is_drawn_in_its_own_colour_and_named_in_the_legend(
        catalogue_site: Dict[str, str]) -> None:
    page = Elements(catalogue_site["models/llama-3.2-11b-vision-instruct.html"])
    bands = page.having("rect", cls="band")
    cross = (3, 8, 13, 18, 23, 28, 33, 38)  # its text_config.cross_attention_layers
    assert [(attrs["data-kind"], attrs["fill"]) for attrs, _ in bands] == [
        ("cross_attention", "#6a3d9a") if index in cross else ("full_attention", "#4e79a7") for index in range(40)]
    legend = [text for _, text in page.having("td")][:20]
    assert legend == ["", "full_attention", "full", "dense", "32",
                      "", "cross_attention", "cross (cross-attention)", "dense", "8",
                      "", "encoder", "full", "dense", "32 (tower)",
                      "", "global_encoder", "full", "dense", "8 (tower)"]


def test_the_kinds_of_a_flavour_with_colours_of_its_own_take_them_in_order_and_the_others_the_palette() -> None:
    from pipeline.catalogue.site import _kind_colours

    kinds = {"attention": "full", "mamba": "ssm", "moe": "none", "mamba_moe": "ssm", "cross": "cross",
             "cross_moe": "cross"}
    stack = {"groups": [{"kind": kind} for kind in ("attention", "mamba", "cross", "moe", "mamba_moe", "mamba",
                                                     "cross_moe")],
             "kinds": {kind: {"attention": flavour} for kind, flavour in kinds.items()}}
    assert _kind_colours(stack) == {"attention": "#4e79a7", "mamba": "#1a7f5a", "cross": "#6a3d9a",
                                    "moe": "#f28e2b", "mamba_moe": "#52b788", "cross_moe": "#9e6fc8"}
