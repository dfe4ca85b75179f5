/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The probe report as a SARIF 2.1.0 log, for code scanning in CI. */
#ifndef SBT_PROBE_SARIF_H
#define SBT_PROBE_SARIF_H

#include <json-c/json.h>

#define SBT_SARIF_SCHEMA  "https://json.schemastore.org/sarif-2.1.0.json"
#define SBT_SARIF_VERSION "2.1.0"
/* The rules (reportingDescriptor ids) of the results. */
#define SBT_SARIF_RULE_SHELL	    "shell-invocation"
#define SBT_SARIF_RULE_INCONCLUSIVE "trace-inconclusive"

/* The uriBaseId of every relative artifact URI: the repository root. */
#define SBT_SARIF_SRCROOT "%SRCROOT%"

/*
 * `report` (the probe report's JSON object, userspace/schema/probe-report.schema.json)
 * as a SARIF 2.1.0 log: one run of tool "sbtrace" (version: report.version) with one
 * result per shell_invocation location (rule shell-invocation; level "error" when
 * affects_final_image and confidence is high, "warning" when it affects it with
 * confidence low, else "note"; properties.confidence and .reason the report's;
 * located at source.file:source.line, relative to %SRCROOT%, when the file is known)
 * and, when the verdict is inconclusive, one result of rule trace-inconclusive (level
 * "warning", at the build's entry file). %SRCROOT% (run.originalUriBaseIds) is the
 * file URI of root, the repository report.repo is in, and artifact URIs are relative to
 * it ("result/Dockerfile" for a repo probed at ROOT/result); root NULL, or one that does
 * not hold report.repo: report.repo itself. run.properties: verdict, confidence,
 * reason. Fields the report lacks or has with another type are taken as null; report
 * is not changed. A new reference; NULL with errno ENOMEM, or EINVAL when report is
 * not an object.
 */
json_object *probe_sarif_at(json_object *report, const char *root);

/*
 * The repository root of the absolute directory dir, into root: the nearest of
 * dir and its parents with a `.git` (a work tree's directory, or the file of a
 * worktree or submodule; no git binary asked), else dir. 0, or -ENAMETOOLONG.
 */
int probe_sarif_root(const char *dir, char *root, size_t len);

/* probe_sarif_at(report, the repository root of report.repo). */
json_object *probe_sarif(json_object *report);

#endif
