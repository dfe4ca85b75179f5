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

/*
 * `report` (the probe report's JSON object, userspace/schema/probe-report.schema.json)
 * as a SARIF 2.1.0 log: one run of tool "sbtrace" (version: report.version) with one
 * result per shell_invocation location (rule shell-invocation; level "error" when
 * affects_final_image, else "note"; located at source.file:source.line relative to
 * SRCROOT, the file URI of report.repo, when the file is known) and, when the verdict
 * is inconclusive, one result of rule trace-inconclusive (level "warning", no
 * location). run.properties: verdict, confidence, reason. Fields the report lacks or
 * has with another type are taken as null; report is not changed.
 * A new reference; NULL with errno ENOMEM, or EINVAL when report is not an object.
 */
json_object *probe_sarif(json_object *report);

#endif
