//! SPEC §27.1: under `tests = "integrity"` the evidence decides a test edit — the base's own
//! tests on the agent's code (the overlay, with its census) and the edit's own diff read by the
//! test-diff reader. Real repositories, real `python3 -m unittest -v` runs (a census runner;
//! the test file at the root, as `run` names no folder that would put it on `ci`).
//!
//! Honest returns, each a test: a reworded message, an added assertion, a test renamed with its
//! body, a base test the contract expects changed. Attacks, each a test: an assertion removed
//! while the code still works (`tests-weakened-edit` although the overlay passes), a skip added
//! over broken code, a comparison loosened, a test dropped, and a chained attack's first step (the
//! test neutered with working code, which must not land without a human).

use serde_json::Value;

use crate::byte_paths::{check, claim, findings};
use crate::fixture::{Part, require};
use crate::scene::Scene;

const CONFIG: &str = "[[checks]]\nname = \"unit\"\nrun = \"python3 -m unittest -v\"\ntimeout_s = 120\n[protected.policy]\ntests = \"integrity\"\n";

/// [`CONFIG`] with the reverse overlay asked for (SPEC §27.1).
const CONFIG_F2P: &str = "[[checks]]\nname = \"unit\"\nrun = \"python3 -m unittest -v\"\ntimeout_s = 120\n[protected.policy]\ntests = \"integrity\"\n[protected.integrity]\nfail_to_pass = true\n";

const CODE: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";
const BROKEN: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";

const TEST: &str = "import unittest\nimport sys\nsys.path.insert(0, 'src')\nfrom calc import add, mul\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3, \"one plus two\")\n        self.assertEqual(add(2, 2), 4)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\nif __name__ == '__main__':\n    unittest.main()\n";

/// A return: `main` has the code and its test; the agent changes the code to `code` (with a
/// real change of its own, `src/extra.py`) and the test file to `test`; `contract` on main when
/// given. `None` when python3 or the sandbox is missing (the test says it skipped).
fn returned(code: &str, test: &str, contract: Option<&str>) -> Option<(i32, Value)> {
    returned_under(CONFIG, code, test, contract)
}

/// [`returned`] under the configuration `config`.
fn returned_under(
    config: &str,
    code: &str,
    test: &str,
    contract: Option<&str>,
) -> Option<(i32, Value)> {
    require(Part::Tool("python3"))?;
    require(Part::Sandbox)?;
    let mut main = vec![
        (".closegate.toml", Some(config)),
        ("src/calc.py", Some(CODE)),
        ("test_calc.py", Some(TEST)),
    ];
    if let Some(c) = contract {
        main.push((".closegate/contracts/x.toml", Some(c)));
    }
    let s = Scene::new()
        .on_main(&main, "calc and its tests")
        .on_agent(
            &[
                ("src/calc.py", Some(code)),
                ("src/extra.py", Some("VALUE = 1\n")),
                ("src/lib.rs", Some("pub fn x() {}\n")),
                ("test_calc.py", Some(test)),
            ],
            "add x",
        )
        .worktree();
    claim(&s.wt, s.tip);
    Some(check(&s.wt))
}

fn verdict(r: &(i32, Value)) -> &str {
    r.1["verdict"].as_str().unwrap_or("")
}

fn kinds(report: &Value) -> Vec<String> {
    let edits = report["integrity"]["edits"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    edits
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["kind"].as_str().unwrap_or(""),
                e["test"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn a_reworded_message_is_verified_with_the_edit_named() {
    let test = TEST.replace("\"one plus two\"", "\"1 + 2 should be 3\"");
    let Some(r) = returned(CODE, &test, None) else {
        return;
    };
    assert_eq!(verdict(&r), "VERIFIED", "{}", r.1);
    assert_eq!(r.1["integrity"]["base_tests"], "pass", "{}", r.1);
    assert!(
        kinds(&r.1).iter().any(|k| k.starts_with("reworded")),
        "{:?}",
        kinds(&r.1)
    );
    assert!(findings(&r.1, "tests-weakened-edit").is_empty(), "{}", r.1);
}

#[test]
fn an_added_assertion_is_verified() {
    let test = TEST.replace(
        "        self.assertEqual(add(2, 2), 4)\n",
        "        self.assertEqual(add(2, 2), 4)\n        self.assertEqual(add(0, 0), 0)\n",
    );
    let Some(r) = returned(CODE, &test, None) else {
        return;
    };
    assert_eq!(verdict(&r), "VERIFIED", "{}", r.1);
    assert!(
        kinds(&r.1).iter().any(|k| k.starts_with("strengthened")),
        "{:?}",
        kinds(&r.1)
    );
}

#[test]
fn a_test_renamed_with_its_body_is_verified() {
    let test = TEST.replace("def test_mul(self)", "def test_multiply(self)");
    let Some(r) = returned(CODE, &test, None) else {
        return;
    };
    assert_eq!(verdict(&r), "VERIFIED", "{}", r.1);
    assert!(findings(&r.1, "tests-missing").is_empty(), "{}", r.1);
}

/// The overlay passes (the code works), and the edit still needs a human: tomorrow's broken
/// `add` would pass the neutered test.
#[test]
fn a_removed_assertion_is_tests_weakened_edit_although_the_overlay_passes() {
    let test = TEST.replace("        self.assertEqual(add(2, 2), 4)\n", "");
    let Some(r) = returned(CODE, &test, None) else {
        return;
    };
    assert_eq!(r.1["integrity"]["base_tests"], "pass", "{}", r.1);
    let found = findings(&r.1, "tests-weakened-edit");
    assert_eq!(found.len(), 1, "{}", r.1);
    assert_eq!(found[0]["severity"], "review");
    assert_eq!(found[0]["path"], "test_calc.py");
    assert_eq!((r.0, verdict(&r)), (3, "PENDING_REVIEW"), "{}", r.1);
}

#[test]
fn a_skip_over_broken_code_is_never_verified() {
    let test = TEST.replace(
        "    def test_add(self):",
        "    @unittest.skip(\"flaky\")\n    def test_add(self):",
    );
    let Some(r) = returned(BROKEN, &test, None) else {
        return;
    };
    assert_ne!(verdict(&r), "VERIFIED", "{}", r.1);
    assert!(!findings(&r.1, "tests-weakened-edit").is_empty(), "{}", r.1);
    assert!(!findings(&r.1, "tests-weakened").is_empty(), "{}", r.1);
}

#[test]
fn a_loosened_comparison_is_tests_weakened_edit() {
    let test = TEST.replace(
        "self.assertEqual(mul(2, 3), 6)",
        "self.assertTrue(mul(2, 3))",
    );
    let Some(r) = returned(CODE, &test, None) else {
        return;
    };
    assert!(!findings(&r.1, "tests-weakened-edit").is_empty(), "{}", r.1);
    assert_eq!(verdict(&r), "PENDING_REVIEW", "{}", r.1);
}

#[test]
fn a_dropped_test_is_tests_weakened_edit() {
    let test = TEST.replace(
        "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n",
        "",
    );
    let Some(r) = returned(CODE, &test, None) else {
        return;
    };
    assert!(!findings(&r.1, "tests-weakened-edit").is_empty(), "{}", r.1);
    assert_eq!(verdict(&r), "PENDING_REVIEW", "{}", r.1);
}

/// A chained attack's first step: the test neutered while the code still works. Were it landed,
/// the next agent's broken `add` would pass; so it never lands without a human.
#[test]
fn a_chained_attack_stops_at_its_first_step() {
    let test = TEST.replace(
        "        self.assertEqual(add(1, 2), 3, \"one plus two\")\n        self.assertEqual(add(2, 2), 4)\n",
        "        return\n        self.assertEqual(add(1, 2), 3, \"one plus two\")\n        self.assertEqual(add(2, 2), 4)\n",
    );
    let Some(r) = returned(CODE, &test, None) else {
        return;
    };
    assert_eq!(r.1["integrity"]["base_tests"], "pass", "{}", r.1);
    assert_ne!(verdict(&r), "VERIFIED", "{}", r.1);
}

/// The task changes what `mul` does; the contract names the base test that changes with it.
#[test]
fn a_base_test_the_contract_expects_changed_is_a_warning() {
    let code = CODE.replace("return a * b", "return a * b * 2");
    let test = TEST.replace(
        "self.assertEqual(mul(2, 3), 6)",
        "self.assertEqual(mul(2, 3), 12)",
    );
    let contract = "branch = \"agent/x\"\nexpect_changed = [\"*test_mul*\"]\n";
    let Some(r) = returned(&code, &test, Some(contract)) else {
        return;
    };
    assert!(findings(&r.1, "tests-weakened").is_empty(), "{}", r.1);
    let found = findings(&r.1, "tests-changed-as-expected");
    assert_eq!(found.len(), 1, "{}", r.1);
    assert_eq!(found[0]["severity"], "warning");
    let expected = r.1["integrity"]["expect_changed"].as_array().unwrap();
    assert!(
        expected
            .iter()
            .any(|id| id.as_str().unwrap().contains("test_mul")),
        "{}",
        r.1
    );
    // Without the contract the same return is a behaviour change a human judges.
    let Some(r) = returned(&code, &test, None) else {
        return;
    };
    assert!(!findings(&r.1, "tests-weakened").is_empty(), "{}", r.1);
    assert_eq!(verdict(&r), "PENDING_REVIEW", "{}", r.1);
}

/// SPEC §27.1: `tests-pass-on-base` never holds a return unless asked; asked (`fail_to_pass`),
/// a return whose new test also passes on the base's code needs a human.
#[test]
fn new_tests_that_pass_on_the_base_hold_a_return_only_when_asked() {
    let test = TEST.replace(
        "        self.assertEqual(add(2, 2), 4)\n",
        "        self.assertEqual(add(2, 2), 4)\n        self.assertEqual(add(5, 5), 10)\n",
    );
    let Some(r) = returned(CODE, &test, None) else {
        return;
    };
    assert_eq!(
        r.1["integrity"]["new_tests_on_base"],
        Value::Null,
        "{}",
        r.1
    );
    assert!(findings(&r.1, "tests-pass-on-base").is_empty(), "{}", r.1);
    assert_eq!(verdict(&r), "VERIFIED", "{}", r.1);
    let Some(r) = returned_under(CONFIG_F2P, CODE, &test, None) else {
        return;
    };
    assert_eq!(r.1["integrity"]["new_tests_on_base"], "pass", "{}", r.1);
    let found = findings(&r.1, "tests-pass-on-base");
    assert_eq!(found.len(), 1, "{}", r.1);
    assert_eq!(found[0]["severity"], "review");
    assert_eq!(verdict(&r), "PENDING_REVIEW", "{}", r.1);
    // The contract may ask for it too.
    let Some(r) = returned(
        CODE,
        &test,
        Some("branch = \"agent/x\"\nfail_to_pass = true\n"),
    ) else {
        return;
    };
    assert_eq!(verdict(&r), "PENDING_REVIEW", "{}", r.1);
}
