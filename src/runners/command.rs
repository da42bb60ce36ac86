//! The one reader of a check's `run` string (issue #46): the commands it runs, each as its
//! words, through every form a shell gives them — chains (`&&`, `||`, `;`, `|`, `&`, newlines,
//! subshells), quotes and escapes, variable assignments before a command, `cd DIR &&`,
//! `bash -c '…'`/`sh -c`, and the programs that run another program (`timeout`, `env`, `nice`,
//! `xvfb-run`, `uv run`, `poetry run`, `npx`, `pnpm exec`, `yarn run`, `python -m`, coverage
//! wrappers). A wrapped command is given both as the wrapper's invocation and as the command it
//! runs, so `true || timeout 600 pytest` invokes pytest (the runners table decides what each
//! invocation means). It never runs anything and reads any text: what it cannot read (an
//! unterminated quote) ends the word there.

/// One command of a `run` string: its words (program first, unquoted, assignments and
/// redirections removed), and the folder a `cd` before it moved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub words: Vec<String>,
    /// The folder a preceding `cd DIR` (or `env -C DIR`) moved to, as written.
    pub dir: Option<String>,
    /// Redirection targets (`< in.txt`, `> out.log`): named paths, not arguments.
    pub redirects: Vec<String>,
}

impl Invocation {
    /// The program's base name (`.venv/bin/pytest` → `pytest`).
    pub fn program(&self) -> &str {
        let first = self.words.first().map_or("", String::as_str);
        first.rsplit('/').next().unwrap_or(first)
    }

    /// The words after the program.
    pub fn args(&self) -> &[String] {
        self.words.get(1..).unwrap_or_default()
    }

    /// The `i`-th argument, or `""`.
    pub fn arg(&self, i: usize) -> &str {
        self.args().get(i).map_or("", String::as_str)
    }

    /// The first argument that is not an option (`cargo +nightly test` → `test`).
    pub fn subcommand(&self) -> Option<&str> {
        self.args()
            .iter()
            .map(String::as_str)
            .find(|w| !w.starts_with(['-', '+']))
    }

    /// Whether an argument is `word`.
    pub fn has_arg(&self, word: &str) -> bool {
        self.args().iter().any(|w| w == word)
    }
}

/// The deepest `sh -c` inside `sh -c` the reader follows.
const MAX_DEPTH: usize = 8;

/// Every command `run` invokes, in order, wrappers and what they wrap included.
pub fn invocations(run: &str) -> Vec<Invocation> {
    let mut out = Vec::new();
    read(run, &mut None, 0, &mut out);
    out
}

/// The words of `run` that could name a repository path (SPEC §4.5): every word of every
/// command (options and assignments aside; the word after an option is a word again), and
/// each joined to the folder a `cd` moved to; `./` stripped, a trailing `/` dropped; `.`, `..`,
/// absolute paths and paths leaving the repository name nothing.
pub fn run_words(run: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut push = |word: &str| {
        let mut path = word;
        while let Some(rest) = path.strip_prefix("./") {
            path = rest;
        }
        let path = path.trim_end_matches('/');
        let inside = !path.is_empty()
            && !path.starts_with('/')
            && !path.starts_with('-')
            && !path
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..");
        if inside && !words.iter().any(|w| w == path) {
            words.push(path.to_string());
        }
    };
    for invocation in invocations(run) {
        let named = invocation.words.iter().chain(&invocation.redirects);
        for word in named.filter(|w| !w.starts_with('-') && !is_assignment(w)) {
            push(word);
            if let Some(dir) = &invocation.dir {
                push(&format!("{}/{word}", dir.trim_end_matches('/')));
            }
        }
    }
    words
}

/// A token of shell text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    /// `&&`, `||`, `;`, `|`, `&`, a newline, `(`, `)`: ends a command.
    Break,
    /// `<`, `>`, `>>`, `2>`, `&>`, …: the next word is a redirection target.
    Redirect,
}

/// Cut shell text into words and operators: quotes and backslashes as a shell reads them,
/// `#` comments dropped, `$(`/backquotes read as a subshell's parentheses.
fn tokens(text: &str) -> Vec<Token> {
    let mut lexer = Lexer::default();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                lexer.in_word = true;
                lexer.word.extend(chars.by_ref().take_while(|c| *c != '\''));
            }
            '"' => lexer.double_quoted(&mut chars),
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => {
                    lexer.in_word = true;
                    lexer.word.push(n);
                }
            },
            '#' if !lexer.in_word => {
                if chars.by_ref().any(|c| c == '\n') {
                    lexer.out.push(Token::Break);
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                lexer.operator(Token::Break);
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' => lexer.control(c, &mut chars),
            '<' | '>' => lexer.redirect(c, &mut chars),
            c if c.is_whitespace() => lexer.end(),
            _ => {
                lexer.in_word = true;
                lexer.word.push(c);
            }
        }
    }
    lexer.end();
    lexer.out
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// The tokens read so far and the word being read.
#[derive(Default)]
struct Lexer {
    out: Vec<Token>,
    word: String,
    /// A word has begun (`''` is an empty word).
    in_word: bool,
}

impl Lexer {
    /// End the word being read, if any.
    fn end(&mut self) {
        if self.in_word {
            self.out.push(Token::Word(std::mem::take(&mut self.word)));
            self.in_word = false;
        }
    }

    /// End the word, then push `token`.
    fn operator(&mut self, token: Token) {
        self.end();
        self.out.push(token);
    }

    /// A `"…"` string: `\` escapes only `"`, `\`, `$`, a backquote and a newline.
    fn double_quoted(&mut self, chars: &mut Chars<'_>) {
        self.in_word = true;
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' if chars.peek().is_some_and(|n| "\"\\$`\n".contains(*n)) => {
                    self.word.extend(chars.next());
                }
                _ => self.word.push(c),
            }
        }
    }

    /// `;`, `&`, `|`, `&&`, `||`, a newline, a parenthesis or a backquote; `&>` redirects.
    fn control(&mut self, c: char, chars: &mut Chars<'_>) {
        if c == '&' && chars.peek() == Some(&'>') {
            chars.next();
            chars.next_if_eq(&'>');
            self.operator(Token::Redirect);
            return;
        }
        if matches!(c, '&' | '|') {
            chars.next_if_eq(&c);
        }
        self.operator(Token::Break);
    }

    /// `<`, `>`, `>>`, `>|`, `2>`; `>&2` and `2>&1` name a descriptor, not a file.
    fn redirect(&mut self, c: char, chars: &mut Chars<'_>) {
        // A file descriptor number just read (`2>`) belongs to the operator.
        if self.in_word && self.word.bytes().all(|b| b.is_ascii_digit()) {
            self.word.clear();
            self.in_word = false;
        }
        self.end();
        chars.next_if(|n| *n == c || *n == '|');
        if chars.next_if_eq(&'&').is_some() {
            while chars.next_if(|n| n.is_ascii_digit() || *n == '-').is_some() {}
            return;
        }
        self.out.push(Token::Redirect);
    }
}

/// Read `text`'s commands into `out`; `dir` is the folder a `cd` moved to so far.
fn read(text: &str, dir: &mut Option<String>, depth: usize, out: &mut Vec<Invocation>) {
    let mut words: Vec<String> = Vec::new();
    let mut redirects: Vec<String> = Vec::new();
    let mut tokens = tokens(text).into_iter();
    loop {
        let token = tokens.next();
        match token {
            Some(Token::Word(w)) => words.push(w),
            Some(Token::Redirect) => {
                if let Some(Token::Word(target)) = tokens.next() {
                    redirects.push(target);
                }
            }
            Some(Token::Break) | None => {
                simple(
                    std::mem::take(&mut words),
                    std::mem::take(&mut redirects),
                    dir,
                    depth,
                    out,
                );
                if token.is_none() {
                    break;
                }
            }
        }
    }
}

/// One simple command: assignments dropped, `cd` followed, wrappers unwrapped.
fn simple(
    mut words: Vec<String>,
    redirects: Vec<String>,
    dir: &mut Option<String>,
    depth: usize,
    out: &mut Vec<Invocation>,
) {
    let at = words
        .iter()
        .position(|w| !is_assignment(w))
        .unwrap_or(words.len());
    words.drain(..at);
    // Reserved words that introduce a command (`if pytest; then …`, `! pytest`).
    while words
        .first()
        .is_some_and(|w| KEYWORDS.contains(&w.as_str()))
    {
        words.remove(0);
    }
    if words.is_empty() {
        if !redirects.is_empty() {
            out.push(Invocation {
                words,
                dir: dir.clone(),
                redirects,
            });
        }
        return;
    }
    if words[0] == "cd" || words[0] == "pushd" {
        let target = words.iter().skip(1).find(|w| !w.starts_with('-'));
        *dir = target.map(|t| join(dir.as_deref(), t));
    }
    let invocation = Invocation {
        words,
        dir: dir.clone(),
        redirects,
    };
    let inner = unwrap(&invocation);
    out.push(invocation.clone());
    match inner {
        Some(Inner::Command(words)) if depth < MAX_DEPTH => {
            let here = invocation.dir.clone();
            simple(words, Vec::new(), &mut here.clone(), depth + 1, out);
        }
        Some(Inner::Script(text)) if depth < MAX_DEPTH => {
            let mut here = invocation.dir.clone();
            read(&text, &mut here, depth + 1, out);
        }
        Some(Inner::InDir(d, words)) if depth < MAX_DEPTH => {
            let mut here = Some(join(invocation.dir.as_deref(), &d));
            simple(words, Vec::new(), &mut here, depth + 1, out);
        }
        _ => {}
    }
}

/// Words a shell reads before a command without running anything.
const KEYWORDS: [&str; 12] = [
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
];

/// `dir` joined to the folder already moved to.
fn join(base: Option<&str>, dir: &str) -> String {
    match base {
        Some(base) if !dir.starts_with('/') => format!("{}/{dir}", base.trim_end_matches('/')),
        _ => dir.to_string(),
    }
}

/// What a wrapper runs.
enum Inner {
    /// Another command, as its words.
    Command(Vec<String>),
    /// Shell text (`sh -c '…'`, `npx -c '…'`, `env -S '…'`).
    Script(String),
    /// A command run in another folder (`env -C DIR cmd`).
    InDir(String, Vec<String>),
}

/// The command a wrapper runs, or `None` when `invocation` wraps nothing.
fn unwrap(invocation: &Invocation) -> Option<Inner> {
    let args = invocation.args();
    let rest = |from: usize| args.get(from..).map(<[String]>::to_vec);
    let command = |v: Option<Vec<String>>| v.filter(|w| !w.is_empty()).map(Inner::Command);
    match invocation.program() {
        "timeout" => {
            let at = skip_options(args, &["-s", "--signal", "-k", "--kill-after"]);
            command(rest(at + 1))
        }
        "env" => env(args),
        "nice" | "ionice" | "chrt" | "taskset" | "stdbuf" | "nohup" | "time" | "command"
        | "exec" | "xargs" | "sudo" | "doas" | "setsid" | "unbuffer" | "caffeinate" => {
            let with_value = [
                "-n",
                "--adjustment",
                "-c",
                "-p",
                "-u",
                "-g",
                "-a",
                "-I",
                "-L",
                "-d",
            ];
            command(rest(skip_options(args, &with_value)))
        }
        "xvfb-run" => {
            let with_value = [
                "-s",
                "--server-args",
                "-n",
                "--server-num",
                "-e",
                "-f",
                "-p",
                "-w",
            ];
            command(rest(skip_options(args, &with_value)))
        }
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" => shell(args),
        "npx" | "bunx" | "pnpx" => npx(args),
        "corepack" => corepack(args),
        "uvx" => command(rest(skip_options(args, &UV_VALUES))),
        "uv" | "poetry" | "pdm" | "pipenv" | "rye" | "hatch" | "conda" | "mamba" | "pixi" => {
            environment_run(args)
        }
        "pnpm" | "yarn" | "npm" | "bun" => package_manager(invocation.program(), args),
        "nyc" | "c8" => command(rest(skip_options(args, &[]))),
        "coverage" => {
            // `coverage run -m pytest` / `coverage run script.py`.
            (args.first().is_some_and(|w| w == "run")).then_some(())?;
            python_like(&args[1..])
        }
        p if is_python(p) => python_like(args),
        _ => None,
    }
}

/// `corepack pnpm@10.17.1+sha512.… test`: the package manager corepack runs, as itself (its
/// release dropped); corepack's own commands (`enable`, `use`, `install`) wrap nothing.
fn corepack(args: &[String]) -> Option<Inner> {
    let (first, rest) = args.split_first()?;
    let name = first
        .split_once('@')
        .map_or(first.as_str(), |(name, _)| name);
    matches!(name, "npm" | "npx" | "pnpm" | "pnpx" | "yarn" | "yarnpkg").then_some(())?;
    let mut words = vec![name.to_string()];
    words.extend_from_slice(rest);
    Some(Inner::Command(words))
}

/// `uv run …`, `poetry run …`, `uv tool run …`: the command run in the project's environment.
fn environment_run(args: &[String]) -> Option<Inner> {
    let at = skip_options(args, &UV_VALUES);
    let run_at = match args.get(at).map(String::as_str) {
        Some("run") => at + 1,
        Some("tool") if args.get(at + 1).is_some_and(|w| w == "run") => at + 2,
        _ => return None,
    };
    let from = run_at + skip_options(&args[run_at..], &UV_VALUES);
    let words = args.get(from..)?.to_vec();
    (!words.is_empty()).then_some(Inner::Command(words))
}

/// Options of `uv`, `poetry`, … that take a value as the next word.
const UV_VALUES: [&str; 16] = [
    "--with",
    "--python",
    "-p",
    "--extra",
    "--group",
    "--package",
    "--directory",
    "--project",
    "--env-file",
    "--index",
    "--from",
    "-e",
    "--env",
    "-C",
    "--cwd",
    "--only-group",
];

/// Whether `program` is a Python interpreter (`python`, `python3`, `python3.12`).
fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        || program == "py"
}

/// `python [-X opt] -m MODULE args`: the module, run as its own command (`python -m pytest`
/// invokes pytest); `-c CODE` and a script run nothing the table knows.
fn python_like(args: &[String]) -> Option<Inner> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        match word.as_str() {
            "-m" => {
                let module = args.get(i + 1)?;
                let mut words = vec![module.clone()];
                words.extend_from_slice(args.get(i + 2..).unwrap_or_default());
                return Some(Inner::Command(words));
            }
            "-X" | "-W" | "-Q" => i += 2,
            w if w.starts_with('-') && w.len() > 1 => i += 1,
            _ => return None,
        }
    }
    None
}

/// The index of the first word of `args` that is not an option; options in `with_value` (as
/// their own word, not `--opt=value`) take the next word as their value.
pub(super) fn skip_options(args: &[String], with_value: &[&str]) -> usize {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        if word == "--" {
            return i + 1;
        }
        if !word.starts_with('-') || word == "-" {
            return i;
        }
        i += if with_value.contains(&word.as_str()) {
            2
        } else {
            1
        };
    }
    i
}

/// `env [-i] [-u NAME] [-C DIR] [-S TEXT] [NAME=value]... command`.
fn env(args: &[String]) -> Option<Inner> {
    let mut i = 0;
    let mut dir: Option<String> = None;
    while let Some(word) = args.get(i) {
        match word.as_str() {
            "-u" | "--unset" => i += 2,
            "-C" | "--chdir" => {
                dir = args.get(i + 1).cloned();
                i += 2;
            }
            "-S" | "--split-string" => {
                let mut text = args.get(i + 1)?.clone();
                for w in args.get(i + 2..).unwrap_or_default() {
                    text.push(' ');
                    text.push_str(w);
                }
                return Some(Inner::Script(text));
            }
            w if w.starts_with("--chdir=") => {
                dir = Some(w["--chdir=".len()..].to_string());
                i += 1;
            }
            "--" => i += 1,
            w if w.starts_with('-') || is_assignment(w) => i += 1,
            _ => break,
        }
    }
    let words = args.get(i..)?.to_vec();
    if words.is_empty() {
        return None;
    }
    Some(match dir {
        Some(dir) => Inner::InDir(dir, words),
        None => Inner::Command(words),
    })
}

/// `sh [-eux] [-o opt] -c TEXT`: the text it runs (a script file it runs is a named path only).
fn shell(args: &[String]) -> Option<Inner> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        match word.as_str() {
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => i += 2,
            w if w.starts_with('-') && !w.starts_with("--") && w.contains('c') => {
                return args.get(i + 1).map(|t| Inner::Script(t.clone()));
            }
            // A cluster ending in `o` (`-euo pipefail`) takes the option's name next.
            w if w.starts_with(['-', '+']) && !w.starts_with("--") && w.ends_with(['o', 'O']) => {
                i += 2;
            }
            w if w.starts_with(['-', '+']) => i += 1,
            _ => return None,
        }
    }
    None
}

/// `npx [--yes] [-p PKG] COMMAND …` or `npx -c 'TEXT'`.
fn npx(args: &[String]) -> Option<Inner> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        match word.as_str() {
            "-c" | "--call" => return args.get(i + 1).map(|t| Inner::Script(t.clone())),
            "-p" | "--package" => i += 2,
            "--" => i += 1,
            w if w.starts_with('-') => i += 1,
            _ => return Some(Inner::Command(args[i..].to_vec())),
        }
    }
    None
}

/// What `npm`, `yarn`, `pnpm` or `bun` runs as a program: `exec`/`dlx`/`x` and, for yarn and
/// pnpm (and bun), a name that is not one of their own commands — `yarn jest` runs the script
/// `jest` or else the binary, and `yarn run jest` likewise (the script is the npm row's).
fn package_manager(program: &str, args: &[String]) -> Option<Inner> {
    let at = skip_options(args, &PM_VALUES);
    let sub = args.get(at)?.as_str();
    let after = args.get(at + 1..).unwrap_or_default();
    let words = match (program, sub) {
        (_, "exec" | "dlx" | "x") => {
            let from = skip_options(after, &["-c", "--call", "-p", "--package"]);
            if let Some(i) = after.iter().position(|w| w == "-c" || w == "--call") {
                return after.get(i + 1).map(|t| Inner::Script(t.clone()));
            }
            after.get(from..)?.to_vec()
        }
        ("yarn" | "pnpm" | "bun", "run") => after.to_vec(),
        ("yarn" | "pnpm" | "bun", s) if !PM_COMMANDS.contains(&s) => args[at..].to_vec(),
        _ => return None,
    };
    (!words.is_empty()).then_some(Inner::Command(words))
}

/// Options of npm, yarn and pnpm that take a value as the next word.
pub(super) const PM_VALUES: [&str; 8] = [
    "-C",
    "--dir",
    "--cwd",
    "--prefix",
    "-w",
    "--workspace",
    "--filter",
    "-F",
];

/// yarn's, pnpm's and bun's own commands (not scripts or binaries).
pub(super) const PM_COMMANDS: [&str; 16] = [
    "install", "i", "add", "remove", "rm", "ci", "exec", "dlx", "x", "test", "t", "link", "unlink",
    "update", "upgrade", "why",
];

/// Whether a shell word is a variable assignment `NAME=value`.
pub(super) fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn programs(run: &str) -> Vec<String> {
        invocations(run)
            .iter()
            .map(|i| i.program().to_string())
            .collect()
    }

    #[test]
    fn every_command_of_a_chain_is_read() {
        for (run, want) in [
            (
                "true || timeout 600 pytest",
                vec!["true", "timeout", "pytest"],
            ),
            ("a && b; c | d & e\nf", vec!["a", "b", "c", "d", "e", "f"]),
            ("(cd x && make test)", vec!["cd", "make"]),
            ("if pytest; then echo ok; fi", vec!["pytest", "echo"]),
            ("echo $(pytest -q)", vec!["echo", "pytest"]),
        ] {
            assert_eq!(programs(run), want, "{run}");
        }
    }

    #[test]
    fn wrappers_give_the_command_they_run() {
        for (run, inner) in [
            ("timeout 600 pytest", "pytest"),
            ("timeout -k 5 -s KILL 10m cargo test", "cargo"),
            ("env CI=1 pytest", "pytest"),
            ("env -u HOME -i A=b -- go test ./...", "go"),
            ("nice -n 19 pytest", "pytest"),
            (
                "xvfb-run -a --server-args='-screen 0 1x1x8' npx jest",
                "jest",
            ),
            ("uv run --with pytest-xdist pytest -n 2", "pytest"),
            ("poetry run python -m pytest", "pytest"),
            ("npx --yes mocha test", "mocha"),
            ("pnpm exec vitest run", "vitest"),
            ("yarn run jest --ci", "jest"),
            ("yarn jest", "jest"),
            ("corepack pnpm@10.17.1+sha512.ab12 test", "pnpm"),
            ("corepack yarn jest --ci", "jest"),
            ("corepack pnpm exec vitest run", "vitest"),
            ("bash -c 'cd sub && pytest -q'", "pytest"),
            ("sh -ec \"prove -r t\"", "prove"),
            ("bash -euo pipefail -c 'go test ./...'", "go"),
            ("python3 -m coverage run -m pytest", "pytest"),
            ("nyc --reporter=text tape t/*.js", "tape"),
            ("env -S 'CI=1 pytest -q'", "pytest"),
            ("stdbuf -oL -eL cargo test", "cargo"),
        ] {
            let found = programs(run);
            assert!(found.iter().any(|p| p == inner), "{run}: {found:?}");
        }
    }

    #[test]
    fn quotes_escapes_and_assignments_are_read_as_a_shell_reads_them() {
        let found = invocations(r#"PYTHONPATH=src A="x y" pytest -k "not slow" 'tests' \"q"#);
        assert_eq!(found[0].words, ["pytest", "-k", "not slow", "tests", "\"q"]);
        let found = invocations("cat<in.txt 2>&1 >out.log|x # pytest");
        assert_eq!(found[0].words, ["cat"]);
        assert_eq!(found[0].redirects, ["in.txt", "out.log"]);
        assert_eq!(
            programs("cat<in.txt 2>&1 >out.log|x # pytest"),
            ["cat", "x"]
        );
        assert!(
            invocations("export A=1; B=2")
                .iter()
                .all(|i| i.program() == "export")
        );
    }

    #[test]
    fn cd_moves_the_commands_after_it() {
        let found = invocations("cd packages/a && npm test; cd ../b && pytest");
        let dirs: Vec<Option<&str>> = found.iter().map(|i| i.dir.as_deref()).collect();
        assert_eq!(
            dirs,
            [
                Some("packages/a"),
                Some("packages/a"),
                Some("packages/a/../b"),
                Some("packages/a/../b")
            ]
        );
        let found = invocations("env -C sub pytest");
        assert_eq!(found[1].dir.as_deref(), Some("sub"));
    }

    #[test]
    fn nesting_is_bounded_and_any_text_is_read() {
        // Each level quotes the one inside it, so the text grows fast: 12 levels is plenty.
        let mut run = "pytest".to_string();
        for _ in 0..12 {
            run = format!("sh -c {}", crate::shell::shell_word(&run));
        }
        let found = invocations(&run);
        assert!(found.len() <= MAX_DEPTH + 2, "{}", found.len());
        for text in [
            "'", "\"", "\\", "$(", "`", "a >", "2>&", "&&&&", "((((", "env -S", "-c",
        ] {
            let _ = invocations(text);
            let _ = run_words(text);
        }
    }

    #[test]
    fn run_words_are_the_paths_a_shell_command_could_name() {
        let words =
            run_words("sh ./scripts/check.sh && pytest 'tests' --rootdir=src/ ; cat<in.txt|x");
        for word in ["sh", "scripts/check.sh", "pytest", "tests", "in.txt", "x"] {
            assert!(words.contains(&word.to_string()), "{word} in {words:?}");
        }
        // SPEC §4.5: an option word names no path (`--rootdir=src/`), nor does an assignment.
        assert!(!words.contains(&"src".to_string()), "{words:?}");
        assert!(
            !words.iter().any(|w| w.starts_with('-') || w.contains('\'')),
            "{words:?}"
        );
        let words = run_words(
            "PYTHONPATH=src python3 -m pytest --cov=lib -p no:cacheprovider -c ci/pytest.ini",
        );
        assert_eq!(
            words,
            ["python3", "pytest", "no:cacheprovider", "ci/pytest.ini"],
            "assignments and option words name no path; the word after an option does"
        );
        for run in ["pytest .", "cat ../x /etc/passwd a//b", "./", "x/../y"] {
            let words = run_words(run);
            assert!(
                words
                    .iter()
                    .all(|w| !w.is_empty() && w != "." && !w.contains("..") && !w.starts_with('/')),
                "{run}: {words:?}"
            );
        }
        let words = run_words("cd sub && pytest tests");
        assert!(words.contains(&"sub/tests".to_string()), "{words:?}");
    }
}
