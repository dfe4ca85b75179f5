// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Dockerfile builds: the engine (podman, else docker), the base images it
 * must already have (the probe never pulls; their ids are inputs, so part of
 * the cache key), its command line, and the image it leaves behind.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "dockerfile/dockerfile.h"
#include "lib/extbin.h"
#include "probe_int.h"
#include "lib/log.h"
#include "lib/treecopy.h"

#define TOOL_TIMEOUT_MS 30000

/* A host tool's exit code (128+signal), -ETIMEDOUT or -errno; output captured into out/errout. */
static int tool_code(char *const *argv, char *out, size_t outlen, char *errout, size_t errlen,
		     int timeout_ms)
{
	struct sbt_run_io io = { .out = out,
				 .out_len = outlen,
				 .err = errout,
				 .err_len = errlen,
				 .timeout_ms = timeout_ms };
	int status = 0, rc = sbt_run(argv, &io, &status);

	return rc ? rc : sbt_exit_code(status);
}

static void msgf(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* snprintf for messages that may be cut. */
static void msgf(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

/* The first line of a tool's message, trimmed (for a warning). */
static const char *first_line(char *s)
{
	size_t n;

	s += strspn(s, " \t\r\n");
	n = strcspn(s, "\r\n");
	s[n] = '\0';
	return s;
}

/* Where ref's tag begins (its ':' after the last '/', before any '@'), or NULL. */
static const char *ref_tag(const char *ref, size_t len)
{
	const char *slash = memrchr(ref, '/', len), *colon = memrchr(ref, ':', len);

	return colon && (!slash || colon > slash) ? colon : NULL;
}

const char *probe_image_mapped(const struct probe_opts *o, const char *ref)
{
	size_t len = strcspn(ref, "@"); /* node:20@sha256:... maps like node:20 */
	char plain[DF_IMAGE_MAX], tagged[DF_IMAGE_MAX + 8];

	snprintf(plain, sizeof(plain), "%.*s", (int)len, ref);
	/* no tag is ":latest" (node = node:latest), as the engine reads it */
	snprintf(tagged, sizeof(tagged), "%s%s", plain,
		 ref_tag(plain, strlen(plain)) ? "" : ":latest");
	for (int i = o->nr_image_map - 1; i >= 0; i--) {
		const char *glob = o->image_map[i].ref;

		if (fnmatch(glob, ref, 0) == 0 || fnmatch(glob, plain, 0) == 0 ||
		    fnmatch(glob, tagged, 0) == 0)
			return o->image_map[i].local;
	}
	return NULL;
}

/* The tag's words that name a variant, not a version (node:alpine is the latest one). */
static bool variant_word(const char *w, size_t n)
{
	static const char *const variants[] = { "slim",	   "bookworm", "bullseye", "buster",
						"trixie",  "stretch",  "nonroot",  "debug",
						"windows", NULL };

	if (n >= 6 && strncmp(w, "alpine", 6) == 0)
		return true;
	for (int i = 0; variants[i]; i++)
		if (n == strlen(variants[i]) && strncmp(w, variants[i], n) == 0)
			return true;
	return false;
}

/*
 * The version ref asks for: its tag's leading number (24-slim: 24, 3.12), else
 * the number its name ends its first word with (nodejs20-debian12: 20), else
 * its tag's first word unless that names a variant (lts-buster-slim: lts),
 * else "latest".
 */
static void asked_version(const char *ref, char *out, size_t outlen)
{
	size_t len = strcspn(ref, "@");
	const char *tag = ref_tag(ref, len), *end = tag ? tag : ref + len;
	const char *name = memrchr(ref, '/', (size_t)(end - ref));
	size_t word;

	name = name ? name + 1 : ref;
	if (tag && strspn(tag + 1, "0123456789") > 0) {
		snprintf(out, outlen, "%.*s", (int)strspn(tag + 1, "0123456789."), tag + 1);
		return;
	}
	word = strcspn(name, "-:@");
	for (size_t i = 0; i < word; i++)
		if (strchr("0123456789", name[i]) && i > 0) {
			snprintf(out, outlen, "%.*s", (int)strspn(name + i, "0123456789."),
				 name + i);
			return;
		}
	word = tag ? strcspn(tag + 1, "-@") : 0;
	if (word && !variant_word(tag + 1, word))
		snprintf(out, outlen, "%.*s", (int)word, tag + 1);
	else
		snprintf(out, outlen, "latest");
}

void probe_image_note(const char *ref, const char *provides, char *buf, size_t len)
{
	const char *digest = strchr(ref, '@');
	size_t product = 0;
	char asked[64];
	int n = 0;

	buf[0] = '\0';
	/* the product is what precedes the version in "Node.js 18.19.0" */
	for (const char *w = provides; *w; w += strcspn(w, " "), w += strspn(w, " "))
		if (strchr("0123456789", *w)) {
			product = (size_t)(w - provides);
			break;
		}
	while (product && provides[product - 1] == ' ')
		product--;
	if (product) {
		asked_version(ref, asked, sizeof(asked));
		n = snprintf(buf, len, "asked: %.*s %s, the stand-in has %s", (int)product,
			     provides, asked, provides);
	}
	if (digest && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 "%sthe digest pin %.20s... cannot be honoured by a stand-in, whose files "
			 "are its own",
			 n ? "; " : "", digest);
}

const char *probe_image_note_of(const struct probe_df *df, const char *ref)
{
	for (int i = 0; i < df->nr_images; i++)
		if (strcmp(df->images[i], ref) == 0)
			return df->notes[i];
	return "";
}

/*
 * The Dockerfile with each mapped FROM's image (as written) replaced by its
 * stand-in, every line where it was, written to a file of ours
 * (b->dockerfile). 0, or -1 with msg.
 */
static int rewrite_froms(const struct probe_opts *o, const struct sbt_dockerfile *df,
			 const char *text, size_t len, struct probe_build *b, char *msg,
			 size_t msglen)
{
	FILE *f;
	unsigned int line = 1;
	int fd;

	snprintf(b->dockerfile, sizeof(b->dockerfile), "/tmp/sbtrace-probe-df.XXXXXX");
	fd = mkstemp(b->dockerfile);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		msgf(msg, msglen, "cannot write the mapped Dockerfile: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		b->dockerfile[0] = '\0';
		return -1;
	}
	for (size_t i = 0; i < len; line++) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) + 1 : len, at = end;
		const char *local = NULL, *base = NULL;

		for (int s = 0; s < df->nr_stages && !local; s++) {
			const struct sbt_df_stage *st = &df->stages[s];

			if (st->line == line && st->base_kind == SBT_DF_BASE_IMAGE &&
			    (local = probe_image_mapped(o, st->image)))
				base = st->base;
		}
		if (local) { /* the image word after FROM (and its flags) */
			const char *hit = NULL, *from = text + i;

			for (const char *q = from; q + strlen(base) <= text + end; q = hit + 1) {
				hit = memmem(q, (size_t)(text + end - q), base, strlen(base));
				if (!hit || hit == from || hit[-1] == ' ' || hit[-1] == '\t')
					break;
			}
			if (hit)
				at = (size_t)(hit - text);
		}
		fwrite(text + i, 1, at - i, f);
		if (at < end) {
			fputs(local, f);
			at += strlen(base);
			fwrite(text + at, 1, end - at, f);
		}
		i = end;
	}
	if (fclose(f)) {
		msgf(msg, msglen, "cannot write the mapped Dockerfile: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static const char *const foreign_tools[] = { "apk", "yum", "dnf", "microdnf", NULL };

/* True when the n bytes at w are `word`. */
static bool word_is(const char *w, size_t n, const char *word)
{
	return n == strlen(word) && strncmp(w, word, n) == 0;
}

const char *probe_foreign_tool(const char *cmd)
{
	bool at_cmd = true; /* the next word is a command's name */

	for (const char *p = cmd; p && *p;) {
		const char *w = p, *slash;
		size_t n;

		if (strchr(" \t\r\n\\", *p)) {
			p++;
			continue;
		}
		if (strchr(";&|()", *p)) {
			at_cmd = true;
			p++;
			continue;
		}
		n = strcspn(p, " \t\r\n;&|()");
		p += n;
		if (!at_cmd)
			continue;
		slash = memrchr(w, '/', n);
		if (slash) { /* /sbin/apk */
			n -= (size_t)(slash + 1 - w);
			w = slash + 1;
		}
		for (int i = 0; foreign_tools[i]; i++)
			if (word_is(w, n, foreign_tools[i]))
				return foreign_tools[i];
		/* after sudo, exec or VAR=value the next word is still a command's */
		at_cmd = word_is(w, n, "sudo") || word_is(w, n, "exec") || memchr(w, '=', n);
	}
	return NULL;
}

/* A RUN's foreign tool: a shell form's command, an exec form's program (or its -c text). */
static const char *run_foreign_tool(const struct sbt_df_instr *in)
{
	if (in->form == SBT_DF_FORM_SHELL)
		return probe_foreign_tool(in->cmd);
	if (in->form != SBT_DF_FORM_EXEC || in->argc < 1)
		return NULL;
	if (in->argc >= 3 && strcmp(in->argv[in->argc - 2], "-c") == 0)
		return probe_foreign_tool(in->argv[in->argc - 1]);
	for (int i = 0; foreign_tools[i]; i++) {
		const char *slash = strrchr(in->argv[0], '/');

		if (strcmp(slash ? slash + 1 : in->argv[0], foreign_tools[i]) == 0)
			return foreign_tools[i];
	}
	return NULL;
}

/* The index in images of the image stage `st` is built on (through its FROM stages), or -1. */
static int root_image_of(const struct sbt_dockerfile *df, int st, const char *const *images, int n)
{
	for (int hops = 0; st >= 0 && hops <= df->nr_stages; hops++) {
		if (df->stages[st].base_kind == SBT_DF_BASE_IMAGE) {
			for (int k = 0; k < n; k++)
				if (strcmp(images[k], df->stages[st].image) == 0)
					return k;
			return -1;
		}
		st = df->stages[st].base_kind == SBT_DF_BASE_STAGE ? df->stages[st].base_stage : -1;
	}
	return -1;
}

/* The first RUN up to the target on a mapped image that runs a foreign tool. */
static void scan_foreign_tools(const struct sbt_dockerfile *df, int target,
			       const char *const *images, int n, struct probe_df *out)
{
	for (int i = 0; i < df->nr_instrs && !out->lacks_tool; i++) {
		const struct sbt_df_instr *in = &df->instrs[i];
		const char *tool;
		int img;

		if (in->stage < 0 || in->stage > target || !sbt_df_is_run(in) ||
		    !(tool = run_foreign_tool(in)))
			continue;
		img = root_image_of(df, in->stage, images, n);
		if (img >= 0 && out->mapped[img][0]) {
			out->lacks_tool = tool;
			out->lacks_line = in->line;
			out->lacks_image = img;
		}
	}
}

/*
 * The base image whose ENTRYPOINT the target inherits: none in the target or
 * the stages it is built FROM, the chain's image (its index in images), else -1.
 */
static int entry_image_of(const struct sbt_dockerfile *df, int target, const char *const *images,
			  int n)
{
	if (target < 0 || sbt_dockerfile_entrypoint(df, target))
		return -1;
	return root_image_of(df, target, images, n);
}

/*
 * What `podman build --target` builds (every stage up to the target, as
 * buildah does): its base images (and their --image-map stand-ins, the
 * Dockerfile rewritten for them) and whether any RUN runs. 0, or -1 with msg.
 */
static int df_scan(const struct probe_opts *o, const struct sbt_build_plan *plan,
		   struct probe_build *b, char *msg, size_t msglen)
{
	const char *repo = o->repo;
	const char *target = plan->target;
	struct probe_df *out = &b->df;
	bool any_mapped = false;
	const char *images[DF_MAX_IMAGES];
	struct sbt_dockerfile df;
	struct sbt_df_error derr;
	char *buf, err[256];
	size_t len;
	int idx, n = -1;

	memset(out, 0, sizeof(*out));
	out->entry_image = -1;
	snprintf(out->file, sizeof(out->file), "%s", plan->dockerfile);
	if (probe_read_repo_text(repo, out->file, &buf, &len, err, sizeof(err)) <= 0) {
		msgf(msg, msglen, "cannot read %s/%s: %s", repo, out->file,
		     err[0] ? err : "absent");
		return -1;
	}
	derr.line = 0;
	memset(&df, 0, sizeof(df));
	if (sbt_dockerfile_parse(buf, len, NULL, &df, &derr) == 0) {
		idx = target[0] ? sbt_dockerfile_stage_index(&df, target) : df.nr_stages - 1;
		if (idx < 0)
			snprintf(derr.msg, sizeof(derr.msg), "no stage '%s'", target);
		else
			n = sbt_dockerfile_images(&df, idx, SBT_DF_UPTO, images, DF_MAX_IMAGES,
						  &derr);
	}
	if (n < 0) {
		msgf(msg, msglen, "%s/%s:%u: %s", repo, out->file, derr.line, derr.msg);
		sbt_dockerfile_free(&df);
		free(buf);
		return -1;
	}
	out->entry_image = entry_image_of(&df, idx, images, n);
	for (int i = 0; i < n; i++) {
		const char *local = probe_image_mapped(o, images[i]);

		snprintf(out->images[out->nr_images], DF_IMAGE_MAX, "%s", images[i]);
		snprintf(out->mapped[out->nr_images++], DF_IMAGE_MAX, "%s", local ? local : "");
		any_mapped |= local != NULL;
	}
	scan_foreign_tools(&df, idx, images, n, out);
	if (any_mapped && rewrite_froms(o, &df, buf, len, b, msg, msglen) < 0) {
		sbt_dockerfile_free(&df);
		free(buf);
		return -1;
	}
	free(buf);
	for (int i = 0; i < df.nr_instrs; i++)
		if (df.instrs[i].stage >= 0 && df.instrs[i].stage <= idx &&
		    strcmp(df.instrs[i].keyword, "RUN") == 0)
			out->nr_runs++;
	sbt_dockerfile_free(&df);
	return 0;
}

/*
 * The inherited ENTRYPOINT: the image's Config.Entrypoint (none: nothing) into
 * df->entry. Nothing when it has none or the inspect fails (the boot then
 * counts its shells as the app's, as before).
 */
static void inspect_entry(const char *tool, const char *image, struct probe_df *df)
{
	char out[2048], errout[512], fmt[] = "{{range .Config.Entrypoint}}{{.}}\n{{end}}";
	char *inspect[] = {
		(char *)tool, "image", "inspect", "--format", fmt, (char *)image, NULL
	};

	df->entry_argc = 0;
	if (tool_code(inspect, out, sizeof(out), errout, sizeof(errout), TOOL_TIMEOUT_MS) != 0)
		return;
	/* one word a line (a word with a newline in it is cut there) */
	for (char *w = out, *nl; (nl = strchr(w, '\n')) && df->entry_argc < DF_MAX_ENTRY;
	     w = nl + 1) {
		*nl = '\0';
		snprintf(df->entry[df->entry_argc++], DF_IMAGE_MAX, "%.*s", DF_IMAGE_MAX - 1, w);
	}
	while (df->entry_argc && !df->entry[df->entry_argc - 1][0])
		df->entry_argc--; /* the tool's own newline after the last */
}

/* One of scripts/base-images.sh's stand-ins: its name, or its sbtrace.recipe label. */
static bool our_stand_in(const char *tool, const char *image)
{
	char out[128], errout[256], fmt[] = "{{index .Labels \"sbtrace.recipe\"}}";
	char *inspect[] = {
		(char *)tool, "image", "inspect", "--format", fmt, (char *)image, NULL
	};

	if (strncmp(image, "localhost/sbtrace-", 18) == 0)
		return true;
	if (tool_code(inspect, out, sizeof(out), errout, sizeof(errout), TOOL_TIMEOUT_MS) != 0)
		return false;
	first_line(out);
	return out[0] && strcmp(out, "<no value>") != 0;
}

/* "sha256:HEX" or "HEX" (64 lower-case hex digits) into hex; false if not an id. */
static bool parse_image_id(const char *s, char hex[65])
{
	if (strncmp(s, "sha256:", 7) == 0)
		s += 7;
	if (strspn(s, "0123456789abcdef") != 64 || (s[64] && s[64] != '\n'))
		return false;
	memcpy(hex, s, 64);
	hex[64] = '\0';
	return true;
}

/* What a stand-in of ours holds (its sbtrace.provides label, "Node.js 18.19.0"), "" none. */
static void stand_in_provides(const char *tool, const char *image, char *out, size_t outlen)
{
	char buf[256], errout[256], fmt[] = "{{index .Config.Labels \"sbtrace.provides\"}}";
	const char *value;
	char *inspect[] = {
		(char *)tool, "image", "inspect", "--format", fmt, (char *)image, NULL
	};

	out[0] = '\0';
	if (tool_code(inspect, buf, sizeof(buf), errout, sizeof(errout), TOOL_TIMEOUT_MS) != 0)
		return;
	value = first_line(buf);
	if (strcmp(value, "<no value>") != 0)
		snprintf(out, outlen, "%.100s", value);
}

/*
 * Base image i is not in the engine's storage: which one, and what to do
 * (--pull, an --image-map line; for a stand-in of the map, build it).
 */
static void missing_image(const struct probe_df *df, int i, const char *target, const char *tool,
			  const char *why, char *msg, size_t msglen)
{
	const char *stage = target[0] ? target : "final";

	if (df->mapped[i][0])
		msgf(msg, msglen,
		     "base image '%.160s' is mapped (--image-map) to '%.160s', which is not in "
		     "%s's local image storage (Dockerfile stage '%.60s' or before): build it "
		     "(scripts/base-images.sh or 'make base-images' builds the localhost/sbtrace-* "
		     "ones), import it, or map the image to another local one with an --image-map "
		     "REF=LOCAL line after this one%s%.100s",
		     df->images[i], df->mapped[i], tool, stage, why[0] ? ": " : "", why);
	else
		msgf(msg, msglen,
		     "base image '%.160s' (Dockerfile stage '%.60s' or before) is not in %s's "
		     "local image storage, and no --image-map line maps it to a local stand-in: "
		     "give --pull where a registry is reachable, or an --image-map REF=LOCAL "
		     "line, e.g. --image-map '%.160s=LOCAL' with LOCAL a local image (the "
		     "stand-ins of scripts/base-images.sh are listed in scripts/image-map)%s%.100s",
		     df->images[i], stage, tool, df->images[i], why[0] ? ": " : "", why);
}

/*
 * Pick the engine and check the base images before anything starts: podman
 * when it is installed, else docker when its engine answers (`docker info`).
 * Every base image must already be in local storage (the probe pulls only
 * with --pull); their ids become inputs (and so part of the cache key), a
 * stand-in's note into df->notes. 0, or -1 with `msg` saying what is
 * missing (b->fail_reason "base_image_missing" when a base image is).
 */
int probe_engine_prepare(const struct probe_opts *o, struct sbt_build_plan *plan,
			 struct probe_build *b, char *msg, size_t msglen)
{
	char out[512], errout[1024], fmt[] = "{{.Id}}";
	char *version[] = { "podman", "--version", NULL };
	char *dinfo[] = { "docker", "info", "--format", "{{.ServerVersion}}", NULL };
	const char *tool;
	struct probe_df *df = &b->df;
	int rc;

	b->eng = ENGINE_NONE;
	b->pull = o->pull;
	b->fail_reason = NULL;
	if (df_scan(o, plan, b, msg, msglen))
		return -1;
	rc = tool_code(version, out, sizeof(out), errout, sizeof(errout), TOOL_TIMEOUT_MS);
	if (rc == 0) {
		b->eng = ENGINE_PODMAN;
	} else if (tool_code(dinfo, out, sizeof(out), errout, sizeof(errout), 10000) == 0) {
		b->eng = ENGINE_DOCKER;
	} else {
		msgf(msg, msglen,
		     "Dockerfile builds need podman (%s; install it and runc with 'make deps', "
		     "then run scripts/podman-setup.sh) or a docker engine ('docker info' "
		     "failed)",
		     rc == 127 ? "not installed" : "'podman --version' failed");
		return -1;
	}
	tool = b->eng == ENGINE_PODMAN ? "podman" : "docker";
	for (int i = 0; i < df->nr_images; i++) {
		char *local = df->mapped[i][0] ? df->mapped[i] : df->images[i];
		char *inspect[] = {
			(char *)tool, "image", "inspect", "--format", fmt, local, NULL
		};

		rc = tool_code(inspect, out, sizeof(out), errout, sizeof(errout), TOOL_TIMEOUT_MS);
		if ((rc != 0 || !parse_image_id(first_line(out), df->ids[i])) && o->pull &&
		    !df->mapped[i][0]) {
			df->ids[i][0] = '\0'; /* podman pulls it: the key cannot pin it */
			continue;
		}
		if (rc != 0 || !parse_image_id(first_line(out), df->ids[i])) {
			missing_image(df, i, plan->target, tool, first_line(errout), msg, msglen);
			b->fail_reason = "base_image_missing";
			return -1;
		}
		if (df->mapped[i][0]) {
			char provides[128];

			stand_in_provides(tool, local, provides, sizeof(provides));
			probe_image_note(df->images[i], provides, df->notes[i],
					 sizeof(df->notes[i]));
		}
		if (plan->nr_inputs < SBT_PROBE_MAX_INPUTS) {
			struct sbt_probe_input *in = &plan->inputs[plan->nr_inputs++];

			snprintf(in->name, sizeof(in->name), "image:%.120s", df->images[i]);
			memcpy(in->sha256, df->ids[i], sizeof(in->sha256));
			snprintf(in->substituted_by, sizeof(in->substituted_by), "%s",
				 df->mapped[i]);
		}
		if (i == df->entry_image)
			inspect_entry(tool, local, df);
	}
	if (df->lacks_tool && !our_stand_in(tool, df->mapped[df->lacks_image]))
		df->lacks_tool = NULL; /* a stand-in of the user's own may have it */
	return 0;
}

/*
 * CONTAINERS_CONF for podman: the caller's, else the one scripts/podman-setup.sh
 * writes next to this binary's build tree (build/bin/sbtrace ->
 * build/podman/containers.conf) when it exists; else podman's defaults.
 */
static void podman_conf_env(void)
{
	char exe[PATH_MAX], conf[PATH_MAX + 32], *slash;
	ssize_t n;

	if (getenv("CONTAINERS_CONF"))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(conf, sizeof(conf), "%s/../podman/containers.conf", exe);
	if (access(conf, R_OK) == 0)
		setenv("CONTAINERS_CONF", conf, 0);
}

/*
 * What confines podman's RUN steps and the boot's container beyond its own
 * defaults: the sandboxes' seccomp rules (sbt_seccomp_oci_profile(), in
 * b->seccomp), and none of the capabilities a build has no use for: device
 * nodes (MKNOD), packet sockets that skip the socket hooks (NET_RAW), file
 * capabilities and keeping set-id bits (SETFCAP, FSETID), chroot,
 * capability bounding (SETPCAP), the audit log. Package managers keep
 * CHOWN, DAC_OVERRIDE, FOWNER, SETUID/SETGID, KILL; a server keeps
 * NET_BIND_SERVICE. And the label sbtrace.probe=NAME (NAME from the
 * cgroup parent /sbtrace/NAME/...) on what podman makes, for the clean-up.
 * The list is valid until the next call.
 */
#define PROBE_CAP_DROP "--cap-drop=MKNOD,NET_RAW,SETFCAP,FSETID,SYS_CHROOT,SETPCAP,AUDIT_WRITE"

static char *const *confine_args(const struct probe_build *b, const char *cgroup_parent)
{
	static char seccomp[96], label[SBT_SANDBOX_NAME_MAX + 48], cap_drop[] = PROBE_CAP_DROP;
	static char *args[4];
	const char *name = cgroup_parent + strlen("/sbtrace/");
	int n = 0;

	args[n++] = cap_drop;
	if (b->seccomp[0]) {
		snprintf(seccomp, sizeof(seccomp), "--security-opt=seccomp=%s", b->seccomp);
		args[n++] = seccomp;
	}
	if (strncmp(cgroup_parent, "/sbtrace/", strlen("/sbtrace/")) == 0) {
		snprintf(label, sizeof(label), "--label=sbtrace.probe=%.*s",
			 (int)strcspn(name, "/"), name);
		args[n++] = label;
	}
	args[n] = NULL;
	return args;
}

int probe_engine_build_argv(struct sbt_build_plan *plan, const struct probe_build *b,
			    const char *context, const char *cgroup_parent)
{
	enum probe_engine eng = b->eng;
	static const char *const podman[] = {
		"podman",     "--runtime",
		"runc",	      "--cgroup-manager",
		"cgroupfs",   "--events-backend",
		"file",	      "build",
		"--no-cache", "--layers=false",
		"--format",   "docker", /* the OCI format drops HEALTHCHECK */
		NULL
	};
	static const char *const docker[] = { "docker", "buildx", "build", "--no-cache", NULL };
	const char *const *fixed = eng == ENGINE_PODMAN ? podman : docker;
	char buf[PATH_MAX + 32];
	int n = 0;

#define ADD(s)                                                                                     \
	do {                                                                                       \
		if (n >= SBT_PROBE_MAX_ARGS)                                                       \
			return -E2BIG;                                                             \
		if (!(plan->argv[n] = strdup(s)))                                                  \
			return -ENOMEM;                                                            \
		plan->argc = ++n;                                                                  \
	} while (0)
	for (const char *const *f = fixed; *f; f++)
		ADD(*f);
	ADD(b->pull ? "--pull=missing" : "--pull=never");
	if (plan->target[0]) { /* else the final stage, unnamed: the engine's default */
		snprintf(buf, sizeof(buf), "--target=%s", plan->target);
		ADD(buf);
	}
	if (b->network[0]) { /* every RUN step in the build's namespace (net.c), or the VM's */
		snprintf(buf, sizeof(buf), "--network=%s", b->network);
		ADD(buf);
		if (strncmp(b->network, "ns:", 3) == 0) /* a microVM's resolv.conf names its tap */
			ADD("--dns=198.18.0.3"); /* any port-53 address goes to the DNS proxy */
	} else {
		ADD("--network=none");
	}
	if (eng == ENGINE_PODMAN) {
		char *const *c = confine_args(b, cgroup_parent);

		for (; *c; c++)
			ADD(*c);
	}
	snprintf(buf, sizeof(buf), "--cgroup-parent=%s", cgroup_parent);
	ADD(buf);
	if (b->iidfile[0]) {
		snprintf(buf, sizeof(buf), "--iidfile=%s", b->iidfile);
		ADD(buf);
	}
	ADD("-f");
	if (b->dockerfile[0])
		snprintf(buf, sizeof(buf), "%s", b->dockerfile);
	else
		snprintf(buf, sizeof(buf), "%s%s%s", plan->dockerfile[0] == '/' ? "" : context,
			 plan->dockerfile[0] == '/' ? "" : "/", plan->dockerfile);
	ADD(buf);
	ADD(context); /* a copy of the repo, never the repo (kind_dockerfile.c) */
#undef ADD
	plan->argv[n] = NULL;
	return 0;
}

/* Remove the image the build produced (never one of the base images). */
static void remove_built_image(const struct probe_build *b)
{
	const struct probe_df *df = &b->df;
	char id[65], out[256], errout[256];

	if (probe_engine_image(b, id) < 0)
		return;
	for (int i = 0; i < df->nr_images; i++)
		if (strcmp(df->ids[i], id) == 0)
			return;
	{
		char *rmi[] = { b->eng == ENGINE_PODMAN ? "podman" : "docker", "rmi", id, NULL };

		tool_code(rmi, out, sizeof(out), errout, sizeof(errout), TOOL_TIMEOUT_MS);
	}
}

/* The OCI seccomp profile into a file of the probe's own (b->seccomp). 0 or -errno. */
static int write_seccomp(struct probe_build *b)
{
	char *json = sbt_seccomp_oci_profile();
	int fd, ret = 0;
	size_t len;

	if (!json)
		return -ENOMEM;
	snprintf(b->seccomp, sizeof(b->seccomp), "/tmp/sbtrace-probe-seccomp.XXXXXX");
	fd = mkstemp(b->seccomp);
	if (fd < 0) {
		ret = -errno;
		b->seccomp[0] = '\0';
		free(json);
		return ret;
	}
	len = strlen(json);
	if (write(fd, json, len) != (ssize_t)len)
		ret = -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	free(json);
	if (ret) {
		unlink(b->seccomp);
		b->seccomp[0] = '\0';
	}
	return ret;
}

int probe_engine_argv(struct sbt_build_plan *plan, struct probe_build *b, const char *context,
		      const char *cgroup_parent)
{
	int fd;

	snprintf(b->iidfile, sizeof(b->iidfile), "/tmp/sbtrace-probe-iid.XXXXXX");
	fd = mkstemp(b->iidfile);
	if (fd < 0) {
		b->iidfile[0] = '\0';
		return -errno;
	}
	close(fd);
	if (b->eng == ENGINE_PODMAN) {
		int ret = write_seccomp(b);

		if (ret < 0)
			return ret;
		podman_conf_env();
	}
	return probe_engine_build_argv(plan, b, context, cgroup_parent);
}

int probe_engine_healthcheck(const struct probe_build *b)
{
	char *podman[] = { "podman",   "--runtime",	     "runc", "--cgroup-manager",
			   "cgroupfs", "--events-backend",   "file", "healthcheck",
			   "run",      (char *)b->container, NULL };
	char *docker[] = { "docker", "healthcheck", "run", (char *)b->container, NULL };
	char out[256], errout[512];

	if (!b->container[0])
		return -EINVAL;
	return tool_code(b->eng == ENGINE_PODMAN ? podman : docker, out, sizeof(out), errout,
			 sizeof(errout), 10000);
}

int probe_engine_image(const struct probe_build *b, char id[65])
{
	char buf[128];
	FILE *f = b->iidfile[0] ? fopen(b->iidfile, "re") : NULL;
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return parse_image_id(first_line(buf), id) ? 0 : -1;
}

int probe_engine_boot_argv(const struct probe_build *b, const char *image, const char *name,
			   const char *cgroup_parent, char **argv, int max)
{
	static char name_opt[160], cg_opt[PATH_MAX], img[72];
	static const char *const podman[] = {
		"podman",   "--runtime",	"runc",		"--cgroup-manager",
		"cgroupfs", "--events-backend", "file",		"run",
		"--rm",	    "--network=none",	"--pull=never", NULL
	};
	static const char *const docker[] = { "docker", "run", "--rm", "--network=none", NULL };
	const char *const *fixed = b->eng == ENGINE_PODMAN ? podman : docker;
	int n = 0;

	snprintf(name_opt, sizeof(name_opt), "--name=%s", name);
	snprintf(cg_opt, sizeof(cg_opt), "--cgroup-parent=%s", cgroup_parent);
	snprintf(img, sizeof(img), "%s", image);
	for (const char *const *f = fixed; *f; f++)
		if (n < max)
			argv[n++] = (char *)*f;
	if (b->eng == ENGINE_PODMAN)
		for (char *const *c = confine_args(b, cgroup_parent); *c && n < max; c++)
			argv[n++] = *c;
	if (n + 3 >= max)
		return -E2BIG;
	argv[n++] = name_opt;
	argv[n++] = cg_opt;
	argv[n++] = img;
	argv[n] = NULL;
	return n;
}

void probe_engine_remove_container(struct probe_build *b)
{
	char *podman[] = { "podman", "rm", "-f", "-t", "0", b->container, NULL };
	char *docker[] = { "docker", "rm", "-f", b->container, NULL };
	char out[256], errout[512];
	int rc = -1;

	if (!b->container[0])
		return;
	/* a container whose conmon was killed is "stopping" a moment: try again */
	for (int i = 0; i < 5 && rc; i++) {
		if (i)
			usleep(200 * 1000);
		rc = tool_code(b->eng == ENGINE_PODMAN ? podman : docker, out, sizeof(out), errout,
			       sizeof(errout), TOOL_TIMEOUT_MS);
	}
	if (rc)
		sbt_log("could not remove container %s (%d): %s", b->container, rc,
			first_line(errout));
	b->container[0] = '\0';
}

void probe_engine_cleanup(struct probe_build *b)
{
	probe_engine_remove_container(b);
	if (b->dockerfile[0]) {
		unlink(b->dockerfile);
		b->dockerfile[0] = '\0';
	}
	if (b->seccomp[0]) {
		unlink(b->seccomp);
		b->seccomp[0] = '\0';
	}
	free(b->vm_script);
	b->vm_script = NULL;
	if (b->context[0]) {
		if (sbt_tree_remove(b->context) < 0)
			sbt_log("could not remove the build context's copy %s", b->context);
		b->context[0] = '\0';
	}
	if (!b->iidfile[0])
		return;
	remove_built_image(b);
	unlink(b->iidfile);
	b->iidfile[0] = '\0';
}
