"""The deliberate bugs bench/mutations.py plants, one by one, and the tests that must
catch each (issues 19 and 25). A mutation names one file, exact snippets of it (each
found exactly once there) and what to put instead, and pytest node ids that exist.
tests/unit/test_mutations.py keeps this list true: when code moves or a test is renamed,
update the row (the snippet, the file, the test id), never drop it silently."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str  # the module the snippets are in, relative to the repository root
    edits: tuple[tuple[str, str], ...]  # (exact old snippet, new snippet), in order
    tests: tuple[str, ...]  # pytest node ids; one must fail with the bug in
    why: str = ""


def m(name: str, file: str, old: str, new: str, *tests: str, why: str = "") -> Mutation:
    return Mutation(name, file, ((old, new),), tests, why)


UNIT, INTEG, PROC = "tests/unit/", "tests/integration/", "tests/process/"
GIT_FIELDS = f"{UNIT}test_gitmerge_fields.py"

MUTATIONS: list[Mutation] = [
    # -- issue 25: the seven planted bugs that got through, and the packer's real one
    m(
        "secrets-forget-ghs-ghr",
        "memcli/core/credentials.py",
        r"gh[pousr]_[A-Za-z0-9]{30,255}",
        r"gh[pou]_[A-Za-z0-9]{30,255}",
        f"{UNIT}test_credential_rules.py",
        why="GitHub server-to-server and refresh tokens pass the secret filter",
    ),
    Mutation(
        "secrets-triggers-forget-ghs-ghr",
        "memcli/core/credentials.py",
        (('    "ghs_",\n', ""), ('    "ghr_",\n', "")),
        (f"{UNIT}test_credential_rules.py",),
        why="the quick pre-check skips texts whose only credential is a ghs_/ghr_ token",
    ),
    m(
        "merge-driver-undoes-unpin",
        "memcli/store/gitmerge.py",
        "            if theirs is None:\n                meta.pop(key, None)\n"
        "            else:\n                meta[key] = theirs\n",
        "            if theirs is not None:\n                meta[key] = theirs\n",
        f"{GIT_FIELDS}::test_a_field_change_and_a_text_edit_both_survive",
        why="a key removed on their side (an unpin) comes back when ours edited the text",
    ),
    m(
        "last-month-name-this-year",
        "memcli/core/dates.py",
        "year = today.year if month < today.month else today.year - 1",
        "year = today.year if month <= today.month else today.year - 1",
        f"{UNIT}test_date_boundaries.py::test_last_month_name_in_that_month_and_the_month_after",
        why='"last November" asked in November means this November',
    ),
    m(
        "untrusted-index-uri-applies",
        "memcli/store/trust.py",
        '"index": ("model", "uri", "token_env", "collection", "workspace"),',
        '"index": ("model", "token_env", "collection", "workspace"),',
        f"{INTEG}test_trust_settings.py",
        why="a cloned repository's memcli.toml points the index at its own Milvus server",
    ),
    m(
        "extract-updates-reflections",
        "memcli/logic/extract.py",
        'if e.provenance not in ("reflection", "conversation") and e.type != "reflection"',
        'if e.provenance != "conversation"',
        f"{UNIT}test_extract_targets.py",
        why="one sentence rewrites a reflection (memcli's own conclusion)",
    ),
    m(
        "front-matter-unsafe-yaml",
        "memcli/store/frontmatter.py",
        "settings = handler.load(yaml_text) if",
        "settings = handler.load(yaml_text, Loader=yaml.UnsafeLoader) if",
        f"{INTEG}test_front_matter_tags.py::test_a_python_tag_in_front_matter_runs_nothing",
        why="a !!python/object/apply tag in a cloned memory.md runs a command",
    ),
    m(
        "mcp-token-file-group-readable",
        "memcli/surfaces/mcp_http.py",
        "info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)",
        "info.st_mode & stat.S_IROTH",
        f"{INTEG}test_mcp_token_modes.py",
        why="a token file at 0640 is accepted: the group can read the bearer token",
    ),
    m(
        "packer-empty-block",
        "memcli/logic/inject.py",
        "    if not chosen:  # every try above was a near-fit",
        "    if False:  # every try above was a near-fit",
        f"{UNIT}test_inject.py::test_near_fits_before_an_entry_that_fits_never_empty_the_block",
        why="16 near-fits before an entry that fits: an empty block (MAX_EXACT_TRIES)",
    ),
    # -- issue 19, item 8 (kept up to date with the code)
    m(
        "watch-observer-off",
        "memcli/surfaces/daemon/watch.py",
        '                if event.event_type in ("opened", "closed_no_write"):\n'
        "                    return\n",
        "                return\n",
        f"{INTEG}test_watch.py::test_observer_follows_create_edit_delete",
        why="the watcher ignores every file event; a search would still re-index by itself",
    ),
    m(
        "faiss-path-ignores-filters",
        "memcli/services/search.py",
        "backend.dense_search(qvec, pool, allowed_ids)",
        "backend.dense_search(qvec, pool, None)",
        f"{INTEG}test_proofs_search.py::test_filters_hold_on_the_faiss_path",
        why="above ann_threshold the HNSW candidates are not filtered by type/keyword/time",
    ),
    Mutation(
        "forget-removes-before-archiving",
        "memcli/services/archive.py",
        (
            (
                "    rt.store.update(ARCHIVE_FILE, add_to_archive([archived_copy(found, reason, "
                "replaced_by, now)]))\n\n",
                "",
            ),
            (
                "    rt.store.update(found.file, remove)\n    return found\n",
                "    rt.store.update(found.file, remove)\n"
                "    rt.store.update(ARCHIVE_FILE, add_to_archive([archived_copy(found, reason, "
                "replaced_by, now)]))\n    return found\n",
            ),
        ),
        (f"{PROC}test_proofs_archive.py::test_forget_crash_between_writes_keeps_the_entry",),
        why="a crash between the two writes leaves the entry in neither file",
    ),
    Mutation(
        "compress-removes-before-archiving",
        "memcli/store/changes.py",
        (
            (
                "    if copies:\n        store.update(ARCHIVE_FILE, add_to_archive(copies))\n"
                "    files = _by_file(plan)\n",
                "    files = _by_file(plan)\n",
            ),
            (
                "    not_removed = {r.entry.id for r in plan.removals} - set(archived)\n",
                "    if copies:\n        store.update(ARCHIVE_FILE, add_to_archive(copies))\n"
                "    not_removed = {r.entry.id for r in plan.removals} - set(archived)\n",
            ),
        ),
        (
            f"{PROC}test_proofs_archive.py::test_applied_plan_crash_between_writes_keeps_every_entry",
        ),
        why="compress/merge plans: entries leave their file before the archive has them",
    ),
    m(
        "mcp-limit-21-accepted",
        "memcli/surfaces/mcp_server.py",
        "Field(ge=1, le=20, description=",
        "Field(ge=1, le=21, description=",
        f"{INTEG}test_mcp.py::test_schemas_version_resources_and_prompt",
    ),
    m(
        "mcp-limit-0-accepted",
        "memcli/surfaces/mcp_server.py",
        "Field(ge=1, le=20, description=",
        "Field(ge=0, le=20, description=",
        f"{INTEG}test_mcp.py::test_schemas_version_resources_and_prompt",
    ),
    m(
        "mcp-limit-ignored",
        "memcli/surfaces/mcp_server.py",
        "            limit=limit,\n",
        "            limit=10,\n",
        f"{INTEG}test_mcp.py::test_schemas_version_resources_and_prompt",
    ),
    m(
        "llm-no-authorization",
        "memcli/adapters/llm.py",
        'headers["Authorization"] = f"Bearer {self.api_key}"',
        'headers["X-Api-Key"] = self.api_key',
        f"{INTEG}test_proofs_llm.py::test_api_key_goes_in_a_bearer_authorization_header",
    ),
    m(
        "llm-no-retries",
        "memcli/adapters/llm.py",
        "for attempt in range(self.retries + 1):",
        "for attempt in range(1):",
        f"{INTEG}test_proofs_llm.py::test_server_errors_are_retried_until_an_answer",
    ),
    m(
        "llm-retries-4xx",
        "memcli/adapters/llm.py",
        "                if exc.code < 500 and exc.code != 429:\n                    break\n",
        "",
        f"{INTEG}test_proofs_llm.py::test_client_errors_are_not_retried",
        why="a 400 (bad request, bad key) is retried, delaying the error for nothing",
    ),
    m(
        "llm-no-fence-stripping",
        "memcli/adapters/llm.py",
        'if text.startswith("```"):',
        "if False:",
        f"{INTEG}test_proofs_llm.py::test_code_fences_around_the_answer_are_stripped",
    ),
    m(
        "neighbour-boost-ignored",
        "memcli/logic/search.py",
        "if neighbours and settings.neighbour_weight > 0:",
        "if False:",
        f"{INTEG}test_proofs_search.py::test_neighbour_boost_lifts_the_continuation_in_an_ordered_log",
    ),
    m(
        "neighbours-never-passed",
        "memcli/services/search.py",
        "neighbours = view.arrays.near if cfg.neighbour_weight > 0 else None",
        "neighbours = None",
        f"{INTEG}test_proofs_search.py::test_neighbour_boost_lifts_the_continuation_in_an_ordered_log",
    ),
    m(
        "guard-no-reread-before-swap",
        "memcli/store/files.py",
        "                if _read_raw(path) != on_disk:  # someone wrote meanwhile: start again\n"
        "                    _discard(tmp)\n"
        "                    continue\n",
        "",
        f"{PROC}test_proofs_guard.py::test_a_save_between_read_and_swap_is_never_replaced",
        why="hidden by renameat2 and by putting the other writer's file back afterwards",
    ),
    m(
        "inject-over-budget",
        "memcli/logic/inject.py",
        "    while tokens > budget and chosen:\n",
        "    while tokens > budget + 40 and chosen:\n",
        f"{UNIT}test_inject.py",
        why="the exact count no longer trims a block that estimates let grow past the budget",
    ),
    m(
        "inject-leaks-secrets",
        "memcli/logic/inject.py",
        "kept = [c for c in chunk if not withheld(c.entry.text, c.entry.meta)]",
        "kept = list(chunk)",
        f"{INTEG}test_credentials.py::test_inject_withholds_unmarked_credentials",
    ),
    m(
        "stale-save-not-recorded",
        "memcli/store/history.py",
        "lost = [] if previous is None else self._removed_memcli_entries(file, previous, data)",
        "lost = []",
        f"{INTEG}test_history.py::test_stale_save_over_an_agent_add_is_noticed_and_restorable",
        why="a stale editor buffer saved over memcli's entries goes unnoticed (no restore)",
    ),
    m(
        "untrusted-toml-llm-settings-apply",
        "memcli/store/config.py",
        "    if risky and not trust.is_trusted(workspace, env, digest):\n",
        "    if False:\n",
        f"{INTEG}test_trust.py::test_untrusted_workspace_sends_nothing",
        why="a cloned repository's memcli.toml could send memories to its own endpoint",
    ),
    # -- issue 25: more on safety-critical code (trust, secrets, validation, merge, files)
    m(
        "trust-survives-a-changed-toml",
        "memcli/store/trust.py",
        'return record.get("sha256") == (digest or config_digest(Path(key)))',
        "return True",
        f"{INTEG}test_trust_settings.py::test_sensitive_setting_applies_only_once_trusted",
        why="an approved memcli.toml edited afterwards (by a pull) stays approved",
    ),
    m(
        "secrets-added-without-allow",
        "memcli/core/validate.py",
        "    if found and not allow:\n",
        "    if False:\n",
        f"{INTEG}test_credentials.py::test_add_refuses_a_credential_unless_allowed",
        why="add stores a credential without --allow-secret",
    ),
    m(
        "secrets-prose-flagged",
        "memcli/core/credentials.py",
        "if value is not None and _NOT_VALUES.match(value):",
        "if False:",
        f"{UNIT}test_credential_rules.py",
        why='"password: required" is refused as a password (prose about passwords)',
    ),
    m(
        "secrets-allowed-ignored",
        "memcli/core/credentials.py",
        "    return not allowed(meta) and has_secret(text)\n",
        "    return has_secret(text)\n",
        f"{INTEG}test_credentials.py::test_inject_withholds_unmarked_credentials",
        why="an entry stored with --allow-secret never reaches an inject block",
    ),
    m(
        "control-characters-stored",
        "memcli/core/validate.py",
        "    bad = _CONTROL.search(text)\n    if bad:\n",
        "    bad = _CONTROL.search(text)\n    if False:\n",
        f"{INTEG}test_hostile.py::test_control_characters_are_refused_and_nothing_is_written",
        why="an escape sequence is written into memory.md (and shown on terminals)",
    ),
    m(
        "metadata-line-break-accepted",
        "memcli/core/validate.py",
        "    bad = _CONTROL_ONE_LINE.search(value)\n    if bad:\n",
        "    bad = _CONTROL_ONE_LINE.search(value)\n    if False:\n",
        f"{INTEG}test_hostile.py::test_source_with_line_breaks_cannot_forge_entries",
        why="--source with a line break forges entries",
    ),
    m(
        "restore-leaves-the-workspace",
        "memcli/core/validate.py",
        '    return name in listed and name.startswith("episodes/") and name.count("/") == 1\n',
        "    return True\n",
        f"{INTEG}test_hostile.py::test_restore_stays_in_the_workspace",
        why="restore writes to a from= path outside the workspace's entry files",
    ),
    m(
        "front-matter-unbounded",
        "memcli/store/frontmatter.py",
        '    if len(text.encode("utf-8")) > FRONT_MATTER_MAX:\n',
        "    if False:\n",
        f"{UNIT}test_markdown.py::test_front_matter_that_cannot_be_read_stops_writes_not_reads",
        why="a huge front matter (a YAML bomb) is parsed",
    ),
    m(
        "merge-driver-duplicate-ids",
        "memcli/store/gitmerge.py",
        "        if len(ids) != len(set(ids)):",
        "        if False:",
        f"{UNIT}test_gitmerge.py::test_a_version_with_a_duplicate_id_is_left_to_git",
        why="a version with one id twice is merged (which entry an edit meant is a guess)",
    ),
    m(
        "merge-driver-drops-their-text",
        "memcli/store/gitmerge.py",
        "        text, other = a.entry.text, b.entry\n",
        "        text, other = a.entry.text, None\n",
        f"{GIT_FIELDS}::test_text_edited_on_both_sides",
        why="a text both sides changed keeps only ours: their edit is lost",
    ),
    m(
        "merge-driver-removal-beats-edit",
        "memcli/store/gitmerge.py",
        "        return (None if b.lines == o.lines else b.lines), None",
        "        return None, None",
        f"{UNIT}test_gitmerge.py::test_removals_apply_unless_the_other_side_edited",
        why="an entry removed here and edited there disappears with the edit",
    ),
    m(
        "daemon-socket-dir-any-mode",
        "memcli/surfaces/daemon/protocol.py",
        "    if st.st_mode & 0o7777 != 0o700:\n",
        "    if False:\n",
        f"{INTEG}test_local_security.py::test_a_fallback_directory_not_ours_alone_is_refused",
        why="a socket directory others can write is used (an attacker's socket gets queries)",
    ),
]
