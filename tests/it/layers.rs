//! The layer fence (issues 31 and 40): the layers and the external crates each module may name,
//! written once here ([`LAYERS`], [`CRATES`]), held to every `use` and path in src/ as Rust's own
//! grammar reads them (`syn`): in a `use` (grouped, renamed, glob, `pub`), in code, in a macro's
//! tokens and in an attribute (`#[derive(clap::ValueEnum)]`), through an alias (`use crate as
//! root;`, `use crate::gates as g;`) and through a `super::` chain. It fails, naming file and line,
//! on an import that points up a layer, an import cycle between top-level modules, a circle
//! between the modules of one folder, an external crate named outside the modules the table allows
//! it in, a module or crate the table does not place, and a test file not wired into
//! tests/it/main.rs. docs/architecture.md carries the tables, generated
//! (`CLOSEGATE_BLESS=1 cargo test layer_table`); `scripts/layers.sh` prints them with every edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::Visit;

/// One layer: its rank (1 is the bottom), its name, its top-level modules and what they are.
struct Layer {
    rank: usize,
    name: &'static str,
    modules: &'static [&'static str],
    what: &'static str,
}

/// The layers, bottom-up. A module names (`crate::…`, `super::…`, an alias) only modules of its
/// own layer or a lower one, and no import cycle joins two top-level modules; a new module of
/// src/lib.rs is placed here.
const LAYERS: &[Layer] = &[
    Layer {
        rank: 1,
        name: "sys",
        modules: &["sys", "term"],
        what: "the only `unsafe`, the test switches, and the terminal (stdout, progress lines)",
    },
    Layer {
        rank: 2,
        name: "repo",
        modules: &["repo", "input_file", "toml_read", "date"],
        what: "git facts, reading files an agent wrote, and the one date grammar",
    },
    Layer {
        rank: 3,
        name: "core",
        modules: &[
            "catalog",
            "finding",
            "report",
            "runners",
            "config",
            "contract",
            "doc",
            "globs",
            "record",
            "ledger",
            "verdict",
            "inherited",
            "shell",
            "stats",
            "fsutil",
        ],
        what: "the types: codes, findings, the report, the configuration, the status document, the record and its rules",
    },
    Layer {
        rank: 4,
        name: "engines",
        modules: &[
            "gates",
            "inputs",
            "sandbox",
            "attest",
            "notes_sync",
            "readiness",
        ],
        what: "the gate sequence and what it runs on",
    },
    Layer {
        rank: 5,
        name: "verbs",
        modules: &[
            "teardown", "hook", "board", "claim", "land", "agent", "sweep", "restore", "review",
            "setup", "guess",
        ],
        what: "what a subcommand does, as data",
    },
    Layer {
        rank: 6,
        name: "render",
        modules: &["render"],
        what: "words for people and formats for machines",
    },
    Layer {
        rank: 7,
        name: "front",
        modules: &["cmd", "cli", "serve"],
        what: "the command line and the server",
    },
];

/// The external crates of Cargo.toml's `[dependencies]` that only some top-level modules may
/// name; every other dependency may be named anywhere. src/lib.rs and src/main.rs sit above
/// every layer.
const CRATES: &[(&str, &[&str])] = &[
    ("clap", &["cli", "cmd"]),
    ("clap_complete", &["cli", "cmd"]),
    ("clap_mangen", &["cli", "cmd"]),
    ("console", &["term", "render"]),
    ("indicatif", &["term", "render"]),
];

/// The library's real API: the top-level modules src/lib.rs declares `pub` (with `run`), the ones
/// the binary, the integration tests and the fuzz targets name. Every other module is
/// `pub(crate)`, so the compiler says when code nothing calls is left behind.
const API: &[&str] = &[
    "attest", "catalog", "cli", "config", "contract", "doc", "finding", "gates", "globs", "ledger",
    "record", "render", "repo", "report", "runners", "sandbox", "term", "verdict",
];

const START: &str = "<!-- layers:start -->\n";
const END: &str = "<!-- layers:end -->";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One source file: its path from the checkout (`src/hook/run.rs`) and its text.
struct Source {
    rel: String,
    text: String,
}

/// The module path of a file under src/ (`src/hook/run.rs` is `hook::run`, `src/hook/mod.rs`
/// `hook`); `None` for the crate root (lib.rs) and the binary (main.rs), which sit above every
/// layer.
fn module_of(rel: &str) -> Option<Vec<String>> {
    let rel = rel.strip_prefix("src/")?.strip_suffix(".rs")?;
    if rel == "lib" || rel == "main" {
        return None;
    }
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

/// What a path names: a path from the crate root, or an external crate.
#[derive(Clone, Debug, PartialEq)]
enum Target {
    Crate(Vec<String>),
    Extern(String),
}

/// A path as written, in the module it is written in, at a 1-based line.
#[derive(Clone, Debug)]
struct Written {
    module: Vec<String>,
    segments: Vec<String>,
    leading_colon: bool,
    line: usize,
}

/// One leaf of a `use` tree: the path it imports (a glob imports everything under `path`) and
/// the name it binds.
#[derive(Clone, Debug)]
struct UseLeaf {
    path: Written,
    binds: Option<String>,
}

/// What one file says: its `use` leaves, the other paths in it, the modules it declares
/// (`mod x;` and inline `mod x { … }`).
#[derive(Default)]
struct Collected {
    uses: Vec<UseLeaf>,
    paths: Vec<Written>,
    modules: Vec<Vec<String>>,
}

/// A `syn` visitor filling [`Collected`] for one file, tracking the inline modules it is in.
struct Collector {
    module: Vec<String>,
    out: Collected,
}

fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

impl Collector {
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, colon: bool) {
        let mut leaf = |path: Vec<String>, binds: Option<String>, line: usize| {
            let path = Written {
                module: self.module.clone(),
                segments: path,
                leading_colon: colon,
                line,
            };
            self.out.uses.push(UseLeaf { path, binds });
        };
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, colon);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let (path, name) = named(prefix, &n.ident);
                leaf(path, name, line_of(n.ident.span()));
            }
            syn::UseTree::Rename(r) => {
                let (path, _) = named(prefix, &r.ident);
                leaf(path, Some(r.rename.to_string()), line_of(r.ident.span()));
            }
            syn::UseTree::Glob(g) => leaf(prefix.clone(), None, line_of(g.star_token.spans[0])),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(tree, prefix, colon);
                }
            }
        }
    }

    fn written(&mut self, segments: Vec<String>, leading_colon: bool, line: usize) {
        self.out.paths.push(Written {
            module: self.module.clone(),
            segments,
            leading_colon,
            line,
        });
    }

    /// The paths of two or more segments in a token stream (a macro's body, an attribute's
    /// arguments), `$crate` read as `crate`.
    fn tokens(&mut self, tokens: TokenStream) {
        let flat: Vec<TokenTree> = tokens.into_iter().collect();
        let colons = |k: usize| {
            matches!((flat.get(k), flat.get(k + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
        };
        let mut k = 0;
        while k < flat.len() {
            match &flat[k] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(first) if k < 2 || !colons(k - 2) => {
                    let dollar =
                        k > 0 && matches!(&flat[k - 1], TokenTree::Punct(p) if p.as_char() == '$');
                    let mut segments = vec![first.to_string()];
                    if dollar && segments[0] == "crate" {
                        segments[0] = "$crate".into();
                    }
                    while colons(k + 1) {
                        let Some(TokenTree::Ident(next)) = flat.get(k + 3) else {
                            break;
                        };
                        segments.push(next.to_string());
                        k += 3;
                    }
                    if segments.len() > 1 {
                        self.written(segments, false, line_of(first.span()));
                    }
                }
                _ => {}
            }
            k += 1;
        }
    }
}

/// The path a `use` leaf named `ident` imports after `prefix`, and the name it binds (`self`
/// binds the prefix's last segment).
fn named(prefix: &[String], ident: &syn::Ident) -> (Vec<String>, Option<String>) {
    if ident == "self" {
        (prefix.to_vec(), prefix.last().cloned())
    } else {
        let mut path = prefix.to_vec();
        path.push(ident.to_string());
        (path, Some(ident.to_string()))
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&item.tree, &mut Vec::new(), item.leading_colon.is_some());
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        for attr in &item.attrs {
            self.visit_attribute(attr);
        }
        self.module.push(item.ident.to_string());
        self.out.modules.push(self.module.clone());
        if let Some((_, items)) = &item.content {
            for it in items {
                self.visit_item(it);
            }
        }
        self.module.pop();
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if let Some(first) = path.segments.first() {
            let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.written(
                segments,
                path.leading_colon.is_some(),
                line_of(first.ident.span()),
            );
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }

    fn visit_meta_list(&mut self, list: &'ast syn::MetaList) {
        self.visit_path(&list.path);
        self.tokens(list.tokens.clone());
    }
}

fn collect(source: &Source, module: &[String]) -> Collected {
    let file = syn::parse_file(&source.text)
        .unwrap_or_else(|e| panic!("{}: syn cannot parse it: {e}", source.rel));
    let mut c = Collector {
        module: module.to_vec(),
        out: Collected::default(),
    };
    c.visit_file(&file);
    c.out
}

/// Every path of the crate, read: the `use` leaves and written paths of every module, and every
/// module there is.
struct Crate {
    uses: BTreeMap<Vec<String>, Vec<UseLeaf>>,
    modules: BTreeSet<Vec<String>>,
    deps: BTreeSet<String>,
}

impl Crate {
    /// The target of `w`, or `None` when it names something inside its own module (a local, a
    /// child module, a prelude item). `depth` bounds a chain of aliases.
    fn resolve(&self, w: &Written, depth: usize) -> Option<Target> {
        let first = w.segments.first()?;
        let rest = &w.segments[1..];
        let with = |mut base: Vec<String>, rest: &[String]| {
            base.extend(rest.iter().cloned());
            Some(Target::Crate(base))
        };
        if w.leading_colon {
            return self
                .deps
                .contains(first)
                .then(|| Target::Extern(first.clone()));
        }
        match first.as_str() {
            "crate" | "$crate" => with(Vec::new(), rest),
            "self" => with(w.module.clone(), rest),
            "super" => {
                let ups = w.segments.iter().take_while(|s| *s == "super").count();
                let keep = w.module.len().checked_sub(ups)?;
                with(w.module[..keep].to_vec(), &w.segments[ups..])
            }
            name => match self.alias(&w.module, name, depth) {
                Some(Target::Crate(base)) => with(base, rest),
                Some(ext) => Some(ext),
                None => self
                    .deps
                    .contains(name)
                    .then(|| Target::Extern(name.to_string())),
            },
        }
    }

    /// What `name` stands for in `module` through its `use` leaves (a rename, or a glob of a
    /// module that holds `name`); `None` when no `use` binds it to a crate path or a crate.
    fn alias(&self, module: &[String], name: &str, depth: usize) -> Option<Target> {
        if depth > 8 {
            return None;
        }
        let leaves = self.uses.get(module)?;
        for leaf in leaves.iter().filter(|l| l.binds.as_deref() == Some(name)) {
            if let Some(t) = self.resolve(&leaf.path, depth + 1) {
                return Some(t);
            }
        }
        for leaf in leaves.iter().filter(|l| l.binds.is_none()) {
            let Some(Target::Crate(base)) = self.resolve(&leaf.path, depth + 1) else {
                continue;
            };
            let mut child = base.clone();
            child.push(name.to_string());
            if self.modules.contains(&child) {
                return Some(Target::Crate(child));
            }
            if let Some(t) = self.alias(&base, name, depth + 1) {
                return Some(t);
            }
        }
        None
    }
}

/// One reference between two modules, with every place it is made.
type Edges = BTreeMap<(String, String), Vec<String>>;

/// What the fence reads from the sources: the edges between top-level modules, the edges
/// between the modules of each folder, where each restricted crate is named, and the paths that
/// name a crate-root item no module of the table holds.
#[derive(Default)]
struct Graph {
    top: Edges,
    folders: BTreeMap<Vec<String>, Edges>,
    externs: Vec<(String, String, String)>,
    problems: Vec<String>,
}

/// The dependency names of a Cargo.toml (`-` read as `_`).
fn dependencies(manifest: &str) -> BTreeSet<String> {
    let doc: toml::Table = manifest.parse().expect("Cargo.toml parses");
    doc.get("dependencies")
        .and_then(|d| d.as_table())
        .map(|t| t.keys().map(|k| k.replace('-', "_")).collect())
        .unwrap_or_default()
}

/// The top-level modules src/lib.rs declares `pub` (not `pub(crate)` or private).
fn declared_pub(lib: &str) -> Vec<String> {
    let file = syn::parse_file(lib).expect("src/lib.rs parses");
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if matches!(m.vis, syn::Visibility::Public(_)) => {
                Some(m.ident.to_string())
            }
            _ => None,
        })
        .collect()
}

/// The API against what src/lib.rs declares `pub`: a `pub` module the API does not list, a
/// listed module that is not `pub`.
fn api_problems(declared_pub: &[String]) -> Vec<String> {
    let mut out: Vec<String> = declared_pub
        .iter()
        .filter(|m| !API.contains(&m.as_str()))
        .map(|m| format!("src/lib.rs: module `{m}` is `pub` but not in the API (`pub(crate)` it)"))
        .collect();
    for m in API.iter().filter(|m| !declared_pub.iter().any(|d| d == *m)) {
        out.push(format!(
            "tests/it/layers.rs: the API names `{m}`, which src/lib.rs does not declare `pub`"
        ));
    }
    out
}

/// The top-level modules src/lib.rs declares.
fn declared(lib: &str) -> Vec<String> {
    let file = syn::parse_file(lib).expect("src/lib.rs parses");
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// Read the sources into a [`Graph`]: every `use` leaf and written path resolved from the
/// module it is in.
fn graph(sources: &[Source], deps: BTreeSet<String>, tops: &BTreeSet<String>) -> Graph {
    let mut krate = Crate {
        uses: BTreeMap::new(),
        modules: tops.iter().map(|t| vec![t.clone()]).collect(),
        deps,
    };
    let mut written: Vec<(&Source, Vec<UseLeaf>, Vec<Written>)> = Vec::new();
    for source in sources {
        let module = module_of(&source.rel).unwrap_or_default();
        if !module.is_empty() {
            krate.modules.insert(module.clone());
        }
        let c = collect(source, &module);
        krate.modules.extend(c.modules);
        for leaf in &c.uses {
            let at = leaf.path.module.clone();
            krate.uses.entry(at).or_default().push(leaf.clone());
        }
        written.push((source, c.uses, c.paths));
    }
    let mut g = Graph::default();
    for (source, uses, paths) in written {
        if module_of(&source.rel).is_none() {
            continue;
        }
        let all = uses.into_iter().map(|l| (l.path, true));
        for (w, is_use) in all.chain(paths.into_iter().map(|w| (w, false))) {
            // A single-segment path in code is a local, unless a `use` binds it (then the
            // `use` already counted) or it names a crate from the root (`::x`).
            if !is_use && w.segments.len() < 2 && !w.leading_colon {
                continue;
            }
            let place = format!("{}:{}", source.rel, w.line);
            match krate.resolve(&w, 0) {
                Some(Target::Crate(to)) => g.crate_edge(&w.module, &to, place, tops, &krate),
                Some(Target::Extern(name)) => g.externs.push((w.module[0].clone(), name, place)),
                None => {}
            }
        }
    }
    g
}

impl Graph {
    /// Record the reference from module `from` to crate path `to`: an edge between their
    /// top-level modules, and one between the modules of the deepest folder holding both.
    fn crate_edge(
        &mut self,
        from: &[String],
        to: &[String],
        place: String,
        tops: &BTreeSet<String>,
        krate: &Crate,
    ) {
        let Some(top) = to.first() else {
            return; // the crate root itself (`use crate as root;`): its uses are counted
        };
        if !tops.contains(top) {
            self.problems.push(format!(
                "{place}: `crate::{top}` is not a module of the layer table"
            ));
            return;
        }
        if from[0] != *top {
            let key = (from[0].clone(), top.clone());
            self.top.entry(key).or_default().push(place);
            return;
        }
        let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        if common < from.len() && common < to.len() && krate.modules.contains(&to[..=common]) {
            let folder = from[..common].to_vec();
            let key = (from[common].clone(), to[common].clone());
            let edges = self.folders.entry(folder).or_default();
            edges.entry(key).or_default().push(place);
        }
    }
}

/// A shortest path of modules from `a` to `b` through `edges`.
fn path(edges: &Edges, a: &str, b: &str) -> Option<Vec<String>> {
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([a]);
    let mut seen = BTreeSet::from([a]);
    while let Some(m) = queue.pop_front() {
        if m == b {
            let mut out = vec![b.to_string()];
            let mut at = b;
            while let Some(p) = prev.get(at) {
                out.push(p.to_string());
                at = p;
            }
            out.reverse();
            return Some(out);
        }
        for (x, y) in edges.keys() {
            if x == m && seen.insert(y) {
                prev.insert(y, x);
                queue.push_back(y);
            }
        }
    }
    None
}

/// Every cycle of `edges`, each once, as `title` then one line per edge with its places.
fn cycles(edges: &Edges, title: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (from, to) in edges.keys() {
        let Some(mut back) = path(edges, to, from) else {
            continue;
        };
        back.insert(0, from.clone());
        let mut key = back[..back.len() - 1].to_vec();
        key.sort();
        if !seen.insert(key) {
            continue;
        }
        out.push(format!("{title} {}:", back.join(" -> ")));
        for pair in back.windows(2) {
            let places = &edges[&(pair[0].clone(), pair[1].clone())];
            out.push(format!(
                "  {} -> {} at {}",
                pair[0],
                pair[1],
                places.join(", ")
            ));
        }
    }
    out
}

/// The name → rank map of the table, failing on a module named twice.
fn ranks() -> BTreeMap<String, usize> {
    let mut rank = BTreeMap::new();
    for layer in LAYERS {
        for m in layer.modules {
            let before = rank.insert(m.to_string(), layer.rank);
            assert!(before.is_none(), "`{m}` is in the layer table twice");
        }
    }
    rank
}

/// The violations of `g`: upward imports, cycles among the rest (an upward import that closes a
/// cycle is named once, as upward), circles inside a folder, crates named where the table does
/// not allow them.
fn violations(g: &Graph, rank: &BTreeMap<String, usize>) -> Vec<String> {
    let name = |r: usize| LAYERS.iter().find(|l| l.rank == r).map_or("?", |l| l.name);
    let mut out = g.problems.clone();
    let mut level = Edges::new();
    for ((from, to), places) in &g.top {
        let (a, b) = (rank[from], rank[to]);
        if b > a {
            for place in places {
                out.push(format!(
                    "{place}: {from} ({a} {}) imports {to} ({b} {}), a higher layer",
                    name(a),
                    name(b)
                ));
            }
        } else {
            level.insert((from.clone(), to.clone()), places.clone());
        }
    }
    out.extend(cycles(&level, "import cycle"));
    for (folder, edges) in &g.folders {
        out.extend(cycles(
            edges,
            &format!("circle inside src/{}/:", folder.join("/")),
        ));
    }
    for (module, krate, place) in &g.externs {
        if let Some((_, only)) = CRATES.iter().find(|(c, _)| c == krate)
            && !only.contains(&module.as_str())
        {
            out.push(format!(
                "{place}: {module} names the crate {krate}, which only {} may name",
                only.join(", ")
            ));
        }
    }
    out
}

/// The table against the modules lib.rs declares and the crates Cargo.toml depends on: a
/// module the table does not place, a table entry that is no module, a restricted crate that is
/// no dependency.
fn table_problems(declared: &[String], deps: &BTreeSet<String>) -> Vec<String> {
    let rank = ranks();
    let mut out: Vec<String> = declared
        .iter()
        .filter(|m| !rank.contains_key(*m))
        .map(|m| format!("src/lib.rs: module `{m}` is not in the layer table"))
        .collect();
    for m in rank.keys().filter(|m| !declared.contains(m)) {
        out.push(format!(
            "tests/it/layers.rs: the layer table names `{m}`, which is not a module of src/lib.rs"
        ));
    }
    for (krate, _) in CRATES.iter().filter(|(c, _)| !deps.contains(*c)) {
        out.push(format!(
            "tests/it/layers.rs: CRATES names `{krate}`, which is not a dependency in Cargo.toml"
        ));
    }
    out
}

/// Every `.rs` file under `dir`, sorted, as paths relative to `base`.
fn rust_files(dir: &Path, base: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(rust_files(&path, base));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(base).unwrap();
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    out
}

fn sources() -> Vec<Source> {
    rust_files(&root().join("src"), root())
        .into_iter()
        .map(|rel| Source {
            text: std::fs::read_to_string(root().join(&rel)).unwrap(),
            rel,
        })
        .collect()
}

/// Everything the fence finds wrong in `sources` (src/lib.rs among them) under Cargo.toml's
/// dependencies `deps`.
fn fence(sources: &[Source], deps: BTreeSet<String>) -> Vec<String> {
    let lib = sources
        .iter()
        .find(|s| s.rel == "src/lib.rs")
        .expect("src/lib.rs");
    let declared = declared(&lib.text);
    let mut out = table_problems(&declared, &deps);
    out.extend(api_problems(&declared_pub(&lib.text)));
    let tops: BTreeSet<String> = declared.into_iter().collect();
    let g = graph(sources, deps, &tops);
    out.extend(violations(&g, &ranks()));
    out
}

fn real_deps() -> BTreeSet<String> {
    dependencies(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap())
}

#[test]
fn no_import_points_up_a_layer_closes_a_cycle_or_names_a_crate_out_of_place() {
    let problems = fence(&sources(), real_deps());
    assert!(
        problems.is_empty(),
        "layer violations:\n{}",
        problems.join("\n")
    );
}

/// The modules of tests/it/ that `main` (a `main.rs` or `mod.rs` text) does not declare, for
/// the files `files` (paths relative to tests/it/): a test file that is not wired in never runs.
fn unwired(files: &[String], declares: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    for rel in files.iter().filter(|f| *f != "main.rs") {
        let path = Path::new(rel);
        let stem = path.file_stem().unwrap().to_string_lossy();
        let parent = path.parent().unwrap();
        let (owner, name) = if stem == "mod" {
            let dir = parent.to_string_lossy().into_owned();
            let up = parent.parent().unwrap();
            let name = parent.file_name().unwrap().to_string_lossy().into_owned();
            (owner_file(up), (name, dir))
        } else {
            (owner_file(parent), (stem.to_string(), rel.clone()))
        };
        let wired = declares(&owner).is_some_and(|text| declared(&text).contains(&name.0));
        if !wired {
            out.push(format!(
                "tests/it/{}: not wired in (`mod {};` in tests/it/{owner})",
                name.1, name.0
            ));
        }
    }
    out
}

/// The file that declares the modules of folder `dir` of tests/it/ (`main.rs` for the top).
fn owner_file(dir: &Path) -> String {
    if dir.as_os_str().is_empty() {
        return "main.rs".to_string();
    }
    format!("{}.rs", dir.display())
}

#[test]
fn every_test_file_is_wired_into_main() {
    let it = root().join("tests/it");
    let files = rust_files(&it, &it);
    let read = |owner: &str| {
        std::fs::read_to_string(it.join(owner))
            .or_else(|_| std::fs::read_to_string(it.join(owner.replace(".rs", "/mod.rs"))))
            .ok()
    };
    let problems = unwired(&files, read);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The tables as markdown: the layers, then the crates only some modules may name.
fn table_markdown() -> String {
    let mut out = String::from("| layer | modules | what they are |\n|---|---|---|\n");
    for l in LAYERS {
        let modules: Vec<String> = l.modules.iter().map(|m| format!("`{m}`")).collect();
        out += &format!(
            "| {} {} | {} | {} |\n",
            l.rank,
            l.name,
            modules.join(", "),
            l.what
        );
    }
    out += "\n| crate | only in |\n|---|---|\n";
    for (krate, only) in CRATES {
        let only: Vec<String> = only.iter().map(|m| format!("`{m}`")).collect();
        out += &format!("| `{krate}` | {} |\n", only.join(", "));
    }
    let api: Vec<String> = API.iter().map(|m| format!("`{m}`")).collect();
    out += &format!(
        "\nThe library's API (`pub` in src/lib.rs, with `run`; every other module is `pub(crate)`): {}.\n",
        api.join(", ")
    );
    out
}

/// docs/architecture.md carries the tables; `CLOSEGATE_BLESS=1 cargo test layer_table`
/// rewrites them.
#[test]
fn architecture_layer_table_matches_the_fence() {
    let table = table_markdown();
    let path = root().join("docs/architecture.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc
        .find(START)
        .expect("docs/architecture.md has no layers:start marker")
        + START.len();
    let end = start
        + doc[start..]
            .find(END)
            .expect("docs/architecture.md has no layers:end marker");
    if std::env::var_os("CLOSEGATE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, format!("{}{table}{}", &doc[..start], &doc[end..])).unwrap();
        return;
    }
    assert!(
        doc[start..end] == table,
        "docs/architecture.md's layer table is stale; run `CLOSEGATE_BLESS=1 cargo test layer_table`"
    );
}

/// `scripts/layers.sh`: the tables, every edge between top-level modules (with its layers) and
/// inside each folder, where each restricted crate is named, and the violations.
#[test]
#[ignore = "run by scripts/layers.sh"]
fn print_the_fence() {
    let sources = sources();
    let lib = sources.iter().find(|s| s.rel == "src/lib.rs").unwrap();
    let tops: BTreeSet<String> = declared(&lib.text).into_iter().collect();
    let g = graph(&sources, real_deps(), &tops);
    let rank = ranks();
    println!("{}", table_markdown());
    println!("imports between top-level modules (from -> to, layers, places):");
    for ((from, to), places) in &g.top {
        let (a, b) = (rank[from], rank[to]);
        println!("  {from} ({a}) -> {to} ({b})  {}", places.len());
    }
    println!("\nimports inside folders:");
    for (folder, edges) in &g.folders {
        for (from, to) in edges.keys() {
            println!("  src/{}/: {from} -> {to}", folder.join("/"));
        }
    }
    println!("\nrestricted crates (crate, module, file):");
    let named: BTreeSet<(&str, &str, &str)> = g
        .externs
        .iter()
        .filter(|(_, krate, _)| CRATES.iter().any(|(c, _)| c == krate))
        .map(|(module, krate, place)| {
            (
                krate.as_str(),
                module.as_str(),
                place.split(':').next().unwrap_or(""),
            )
        })
        .collect();
    for (krate, module, file) in named {
        println!("  {krate} in {module}: {file}");
    }
    let problems = fence(&sources, real_deps());
    println!("\nviolations: {}", problems.len());
    for p in problems {
        println!("  {p}");
    }
}

/// The real sources with `scratch` files added (or replacing one of the same path).
fn with_scratch(scratch: &[(&str, &str)]) -> Vec<String> {
    let mut sources: Vec<Source> = sources()
        .into_iter()
        .filter(|s| !scratch.iter().any(|(rel, _)| *rel == s.rel))
        .collect();
    for (rel, text) in scratch {
        sources.push(Source {
            rel: rel.to_string(),
            text: text.to_string(),
        });
    }
    fence(&sources, real_deps())
}

fn caught(problems: &[String], wanted: &str) {
    assert!(
        problems.iter().any(|p| p.contains(wanted)),
        "the fence missed `{wanted}`:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_fence_catches_an_upward_import_however_it_is_written() {
    let got = with_scratch(&[(
        "src/repo/scratch.rs",
        "use crate::cmd::check;\n\
         pub(crate) use crate::{sys, render::{self as r}};\n\
         use crate as root;\n\
         use super::super as up;\n\
         fn f() {\n    root::cli::x();\n    up::board::y();\n    crate::gates::z();\n    \
         let _ = format!(\"{}\", crate::land::w());\n    <crate::hook::T as X>::new();\n}\n\
         macro_rules! m { () => { $crate::sweep::v() } }\n",
    )]);
    for (line, to) in [
        (1, "cmd"),
        (2, "render"),
        (6, "cli"),
        (7, "board"),
        (8, "gates"),
        (9, "land"),
        (10, "hook"),
        (12, "sweep"),
    ] {
        caught(
            &got,
            &format!("src/repo/scratch.rs:{line}: repo (2 repo) imports {to} ("),
        );
    }
    assert!(!got.iter().any(|p| p.contains("imports sys")), "{got:?}");
}

#[test]
fn the_fence_catches_an_alias_through_a_glob_and_a_chain() {
    let got = with_scratch(&[(
        "src/repo/scratch.rs",
        "mod inner {\n    use crate as root;\n    use root::cmd as c;\n    fn f() { c::x(); }\n    \
         mod tests {\n        use super::*;\n        fn g() { root::serve::y(); }\n    }\n}\n",
    )]);
    caught(&got, "src/repo/scratch.rs:3: repo (2 repo) imports cmd (");
    caught(&got, "src/repo/scratch.rs:4: repo (2 repo) imports cmd (");
    caught(&got, "src/repo/scratch.rs:7: repo (2 repo) imports serve (");
}

#[test]
fn the_fence_catches_a_cycle_within_a_layer() {
    let got = with_scratch(&[
        ("src/shell/scratch.rs", "use crate::stats::Scratch;\n"),
        ("src/stats/scratch.rs", "fn f() { crate::shell::g(); }\n"),
    ]);
    caught(&got, "import cycle shell -> stats -> shell:");
    caught(&got, "  shell -> stats at src/shell/scratch.rs:1");
    caught(&got, "  stats -> shell at src/stats/scratch.rs:1");
}

#[test]
fn the_fence_catches_a_circle_inside_a_folder() {
    let got = with_scratch(&[
        ("src/repo/scratch_a.rs", "use super::scratch_b::B;\n"),
        (
            "src/repo/scratch_b.rs",
            "fn f() { crate::repo::scratch_a::g(); }\n",
        ),
    ]);
    caught(
        &got,
        "circle inside src/repo/: scratch_a -> scratch_b -> scratch_a:",
    );
    caught(&got, "  scratch_a -> scratch_b at src/repo/scratch_a.rs:1");
}

#[test]
fn the_fence_catches_a_crate_named_out_of_place() {
    let got = with_scratch(&[(
        "src/gates/scratch.rs",
        "#[derive(Debug, clap::ValueEnum)]\nenum E { A }\nfn f() {\n    use indicatif::ProgressBar;\n    \
         let _ = ::console::Term::stdout();\n}\nuse clap_complete as cc;\n",
    )]);
    caught(
        &got,
        "src/gates/scratch.rs:1: gates names the crate clap, which only cli, cmd may name",
    );
    caught(
        &got,
        "src/gates/scratch.rs:4: gates names the crate indicatif",
    );
    caught(
        &got,
        "src/gates/scratch.rs:5: gates names the crate console",
    );
    caught(
        &got,
        "src/gates/scratch.rs:7: gates names the crate clap_complete",
    );
}

#[test]
fn the_fence_catches_a_module_the_table_does_not_place() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let lib = format!("{lib}\npub mod scratch;\n").replace("pub mod repo;", "pub(crate) mod repo;");
    let got = with_scratch(&[
        ("src/lib.rs", &lib),
        ("src/scratch.rs", "fn f() {}\n"),
        ("src/repo/scratch.rs", "use crate::nowhere::X;\n"),
    ]);
    caught(
        &got,
        "src/lib.rs: module `scratch` is not in the layer table",
    );
    caught(
        &got,
        "src/repo/scratch.rs:1: `crate::nowhere` is not a module of the layer table",
    );
    caught(
        &got,
        "src/lib.rs: module `scratch` is `pub` but not in the API (`pub(crate)` it)",
    );
    caught(
        &got,
        "tests/it/layers.rs: the API names `repo`, which src/lib.rs does not declare `pub`",
    );
}

#[test]
fn the_fence_catches_a_test_file_not_wired_in() {
    let files: Vec<String> = [
        "main.rs", "a.rs", "b.rs", "c.rs", "c/d.rs", "c/e.rs", "f/mod.rs",
    ]
    .map(str::to_string)
    .into();
    let texts = BTreeMap::from([
        ("main.rs", "mod a;\n// mod b;\nmod c;\n"),
        ("c.rs", "mod d;\n"),
    ]);
    let got = unwired(&files, |owner| texts.get(owner).map(|t| t.to_string()));
    assert_eq!(
        got,
        [
            "tests/it/b.rs: not wired in (`mod b;` in tests/it/main.rs)",
            "tests/it/c/e.rs: not wired in (`mod e;` in tests/it/c.rs)",
            "tests/it/f: not wired in (`mod f;` in tests/it/main.rs)",
        ]
    );
}
