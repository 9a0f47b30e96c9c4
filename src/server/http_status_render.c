/*
 * http_status_render.c — the status page's HTML and JSON, formatted on the
 * endpoint thread from a snapshot (http_status_snap.h), no lock held.
 * Every name that came from a client or the volume (topics, groups,
 * members, hosts) is escaped: HTML text and attributes with &, <, >, "
 * and ' as entities, JSON strings with \", \\ and \uXXXX for control
 * characters and <, > and & (so the JSON is also safe inside HTML).
 */
#include "server/http_status_snap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/metrics.h"

#define P kaas_mbuf_printf

static void html(struct kaas_mbuf *b, const char *v)
{
	if (!v)
		return;
	const char *run = v;
	for (const char *p = v;; p++) {
		const char *ent = NULL;
		switch (*p) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '"': ent = "&quot;"; break;
		case '\'': ent = "&#39;"; break;
		case 0: break;
		default: continue;
		}
		if (p > run)
			P(b, "%.*s", (int)(p - run), run);
		if (!*p)
			return;
		P(b, "%s", ent);
		run = p + 1;
	}
}

static void jstr(struct kaas_mbuf *b, const char *v)
{
	if (!v) {
		P(b, "null");
		return;
	}
	P(b, "\"");
	const char *run = v;
	for (const char *p = v;; p++) {
		unsigned char c = (unsigned char)*p;
		int esc = c == '"' || c == '\\' || c < 0x20 || c == '<' || c == '>' || c == '&';
		if (!esc && c)
			continue;
		if (p > run)
			P(b, "%.*s", (int)(p - run), run);
		if (!c)
			break;
		if (c == '"' || c == '\\')
			P(b, "\\%c", c);
		else
			P(b, "\\u%04x", c);
		run = p + 1;
	}
	P(b, "\"");
}

static void when(char *buf, size_t size, int64_t unix_ms)
{
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static const char *state_name(enum st_part_state st)
{
	switch (st) {
	case ST_LED: return "led here";
	case ST_NOT_LED: return "led elsewhere";
	case ST_RECOVERING: return "recovering";
	case ST_OFFLINE: return "offline";
	}
	return "?";
}

static void num_or_dash(struct kaas_mbuf *b, int64_t v)
{
	if (v < 0)
		P(b, "<td class=n>&ndash;</td>");
	else
		P(b, "<td class=n>%lld</td>", (long long)v);
}

static void size_cell(struct kaas_mbuf *b, int64_t v)
{
	if (v < 0) {
		P(b, "<td class=n>&ndash;</td>");
		return;
	}
	const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int i = 0;
	while (d >= 1024 && i < 4) {
		d /= 1024;
		i++;
	}
	if (i == 0)
		P(b, "<td class=n>%lld B</td>", (long long)v);
	else
		P(b, "<td class=n>%.1f %s</td>", d, u[i]);
}

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.2em 2em;color:#1b1f24;background:#fafbfc}"
	"h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em;"
	"border-bottom:1px solid #d0d7de;padding-bottom:.2em}"
	"table{border-collapse:collapse;background:#fff;margin:.3em 0}"
	"th,td{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top}"
	"th{background:#eef1f4;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	".ok{color:#1a7f37;font-weight:600}.bad{color:#cf222e;font-weight:600}.dim{color:#656d76}"
	".meta{color:#656d76;margin-bottom:.8em}code{font-size:.95em}";

static void page_brokers(struct kaas_mbuf *b, const struct kaas_status_snap *s)
{
	P(b, "<h2>Brokers</h2><table><tr><th>id</th><th>address</th><th>liveness</th>"
	     "<th>role</th><th>incarnation</th></tr>");
	for (int i = 0; i < s->nbrokers; i++) {
		const struct st_broker *x = &s->brokers[i];
		P(b, "<tr><td class=n>%d</td><td><code>", (int)x->id);
		html(b, x->host);
		P(b, ":%d</code></td><td class=%s>%s</td><td>%s%s</td><td><code>%016llx</code></td></tr>",
		  (int)x->port, x->alive ? "ok" : "bad",
		  x->alive ? "alive" : x->stopped ? "stopped" : "dead",
		  x->id == s->controller ? "controller" : "",
		  x->id == s->self ? (x->id == s->controller ? ", this broker" : "this broker") : "",
		  (unsigned long long)x->incarnation);
	}
	P(b, "</table>");
}

static void page_topics(struct kaas_mbuf *b, const struct kaas_status_snap *s)
{
	P(b, "<h2>Topics</h2>");
	if (!s->ntopics) {
		P(b, "<p class=dim>No topics.</p>");
		return;
	}
	P(b, "<table><tr><th>topic</th><th>partition</th><th>leader</th><th>epoch</th>"
	     "<th>here</th><th>log start</th><th>high watermark</th><th>last stable</th>"
	     "<th>size</th><th>open txns</th></tr>");
	for (int i = 0; i < s->ntopics; i++) {
		const struct st_topic *t = &s->topics[i];
		for (int32_t p = 0; p < t->ncopied; p++) {
			const struct st_part *x = &t->parts[p];
			P(b, "<tr>");
			if (p == 0) {
				P(b, "<td rowspan=%d><b>", (int)t->ncopied);
				html(b, t->name);
				P(b, "</b><br><span class=dim>%d partition(s)</span></td>", (int)t->npart);
			}
			P(b, "<td class=n>%d</td>", (int)x->index);
			if (x->leader < 0)
				P(b, "<td class=bad>none</td><td class=n>&ndash;</td>");
			else
				P(b, "<td class=n>%d</td><td class=n>%u</td>", (int)x->leader, x->epoch);
			P(b, "<td class=%s>%s</td>", x->state == ST_LED ? "ok" :
			  x->state == ST_NOT_LED ? "dim" : "bad", state_name(x->state));
			num_or_dash(b, x->start);
			P(b, "<td class=n data-hw>");
			if (x->hw < 0)
				P(b, "&ndash;");
			else
				P(b, "%lld", (long long)x->hw);
			P(b, "</td>");
			num_or_dash(b, x->lso);
			size_cell(b, x->size);
			if (x->state == ST_LED)
				P(b, "<td class=n>%d</td>", x->open_txns);
			else
				P(b, "<td class=n>&ndash;</td>");
			P(b, "</tr>");
		}
		if (t->ncopied == 0) {
			P(b, "<tr><td><b>");
			html(b, t->name);
			P(b, "</b></td><td colspan=9 class=dim>%d partition(s), not shown</td></tr>",
			  (int)t->npart);
		}
	}
	P(b, "</table>");
	if (s->cut)
		P(b, "<p class=dim>Only the first %d partitions are shown.</p>", KAAS_STATUS_MAX_PARTS);
}

static void page_groups(struct kaas_mbuf *b, const struct kaas_status_snap *s)
{
	P(b, "<h2>Consumer groups <span class=dim>(coordinated here)</span></h2>");
	if (!s->ngroups) {
		P(b, "<p class=dim>No groups coordinated by this broker.</p>");
		return;
	}
	for (int i = 0; i < s->ngroups; i++) {
		const struct st_group *g = &s->groups[i];
		P(b, "<h3>");
		html(b, g->id);
		P(b, " <span class=dim>&middot; ");
		html(b, g->state);
		P(b, " &middot; %d member(s)", g->nmembers);
		if (g->protocol_type && *g->protocol_type) {
			P(b, " &middot; ");
			html(b, g->protocol_type);
			if (g->protocol && *g->protocol) {
				P(b, "/");
				html(b, g->protocol);
			}
		}
		P(b, "</span></h3>");
		if (g->nmembers) {
			P(b, "<table><tr><th>member</th><th>client</th><th>host</th><th>assigned</th></tr>");
			for (int k = 0; k < g->nmembers; k++) {
				const struct st_member *m = &g->members[k];
				P(b, "<tr><td><code>");
				html(b, m->id);
				P(b, "</code>");
				if (m->instance_id) {
					P(b, "<br><span class=dim>static: ");
					html(b, m->instance_id);
					P(b, "</span>");
				}
				P(b, "</td><td>");
				html(b, m->client_id);
				P(b, "</td><td>");
				html(b, m->host);
				P(b, "</td><td>");
				html(b, m->assignment);
				P(b, "</td></tr>");
			}
			P(b, "</table>");
		}
		if (g->ncommits) {
			P(b, "<table><tr><th>topic</th><th>partition</th><th>committed</th><th>lag</th></tr>");
			for (int k = 0; k < g->ncommits; k++) {
				const struct st_commit *c = &g->commits[k];
				P(b, "<tr><td>");
				html(b, c->topic);
				P(b, "</td><td class=n>%d</td>", (int)c->partition);
				num_or_dash(b, c->offset);
				num_or_dash(b, c->lag);
				P(b, "</tr>");
			}
			P(b, "</table>");
		} else {
			P(b, "<p class=dim>No committed offsets.</p>");
		}
	}
}

static void page_txns_events(struct kaas_mbuf *b, const struct kaas_status_snap *s)
{
	P(b, "<h2>Transactions in flight <span class=dim>(on partitions led here)</span></h2>");
	if (!s->ntxns) {
		P(b, "<p class=dim>None open.</p>");
	} else {
		P(b, "<table><tr><th>topic</th><th>partition</th><th>producer id</th><th>epoch</th>"
		     "<th>first offset</th></tr>");
		for (int i = 0; i < s->ntxns; i++) {
			const struct st_txn *x = &s->txns[i];
			P(b, "<tr><td>");
			html(b, x->topic);
			P(b, "</td><td class=n>%d</td><td class=n>%lld</td><td class=n>%d</td>"
			     "<td class=n>%lld</td></tr>", (int)x->partition, (long long)x->producer_id,
			  (int)x->epoch, (long long)x->first_offset);
		}
		P(b, "</table>");
	}
	P(b, "<h2>Recent cluster events <span class=dim>(as this broker saw them)</span></h2>");
	if (!s->nevents) {
		P(b, "<p class=dim>None since this broker started.</p>");
		return;
	}
	P(b, "<table><tr><th>when</th><th>what</th></tr>");
	for (int i = 0; i < s->nevents; i++) {
		char w[40];
		when(w, sizeof w, s->events[i].unix_ms);
		P(b, "<tr><td>%s</td><td>", w);
		html(b, s->events[i].text);
		P(b, "</td></tr>");
	}
	P(b, "</table>");
}

static void format_html(struct kaas_mbuf *b, const struct kaas_status_snap *s)
{
	char w[40];
	when(w, sizeof w, s->taken_unix_ms);
	P(b, "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
	     "<meta http-equiv=refresh content=5>"
	     "<meta name=viewport content=\"width=device-width\">"
	     "<title>kaas broker %d</title><style>%s</style></head><body>", (int)s->self, css);
	P(b, "<h1>kaas &middot; broker %d</h1><div class=meta>cluster <code>", (int)s->self);
	html(b, s->cluster_id);
	P(b, "</code> &middot; ");
	if (s->controller < 0)
		P(b, "<span class=bad>no controller</span>");
	else
		P(b, "controller %d", (int)s->controller);
	P(b, " &middot; <span class=%s>%s</span> &middot; snapshot %s &middot; refreshes every 5 s "
	     "&middot; <a href=\"/status.json\">status.json</a> &middot; "
	     "<a href=\"/metrics\">metrics</a></div>",
	  s->ready ? "ok" : "bad", s->fenced ? "fenced" : s->ready ? "ready" : "not ready", w);
	page_brokers(b, s);
	page_topics(b, s);
	page_groups(b, s);
	page_txns_events(b, s);
	if (s->oom)
		P(b, "<p class=bad>Out of memory while taking the snapshot: some rows are missing.</p>");
	P(b, "</body></html>\n");
}

static void format_json(struct kaas_mbuf *b, const struct kaas_status_snap *s)
{
	P(b, "{\"broker\":%d,\"cluster_id\":", (int)s->self);
	jstr(b, s->cluster_id);
	P(b, ",\"taken_unix_ms\":%lld,\"controller\":%d,\"ready\":%s,\"fenced\":%s,\"brokers\":[",
	  (long long)s->taken_unix_ms, (int)s->controller, s->ready ? "true" : "false",
	  s->fenced ? "true" : "false");
	for (int i = 0; i < s->nbrokers; i++) {
		const struct st_broker *x = &s->brokers[i];
		P(b, "%s{\"id\":%d,\"host\":", i ? "," : "", (int)x->id);
		jstr(b, x->host);
		P(b, ",\"port\":%d,\"alive\":%s,\"stopped\":%s,\"incarnation\":\"%016llx\"}",
		  (int)x->port, x->alive ? "true" : "false", x->stopped ? "true" : "false",
		  (unsigned long long)x->incarnation);
	}
	P(b, "],\"topics\":[");
	for (int i = 0; i < s->ntopics; i++) {
		const struct st_topic *t = &s->topics[i];
		P(b, "%s{\"name\":", i ? "," : "");
		jstr(b, t->name);
		P(b, ",\"partitions\":%d,\"shown\":[", (int)t->npart);
		for (int32_t p = 0; p < t->ncopied; p++) {
			const struct st_part *x = &t->parts[p];
			P(b, "%s{\"partition\":%d,\"leader\":%d,\"leader_epoch\":%u,\"state\":\"%s\","
			     "\"log_start\":%lld,\"high_watermark\":%lld,\"last_stable\":%lld,"
			     "\"size_bytes\":%lld,\"open_transactions\":%d}",
			  p ? "," : "", (int)x->index, (int)x->leader, x->epoch, state_name(x->state),
			  (long long)x->start, (long long)x->hw, (long long)x->lso, (long long)x->size,
			  x->open_txns);
		}
		P(b, "]}");
	}
	P(b, "],\"partitions_cut\":%s,\"groups\":[", s->cut ? "true" : "false");
	for (int i = 0; i < s->ngroups; i++) {
		const struct st_group *g = &s->groups[i];
		P(b, "%s{\"group\":", i ? "," : "");
		jstr(b, g->id);
		P(b, ",\"state\":");
		jstr(b, g->state);
		P(b, ",\"protocol_type\":");
		jstr(b, g->protocol_type);
		P(b, ",\"protocol\":");
		jstr(b, g->protocol);
		P(b, ",\"members\":[");
		for (int k = 0; k < g->nmembers; k++) {
			const struct st_member *m = &g->members[k];
			P(b, "%s{\"member_id\":", k ? "," : "");
			jstr(b, m->id);
			P(b, ",\"instance_id\":");
			jstr(b, m->instance_id);
			P(b, ",\"client_id\":");
			jstr(b, m->client_id);
			P(b, ",\"host\":");
			jstr(b, m->host);
			P(b, ",\"assignment\":");
			jstr(b, m->assignment);
			P(b, "}");
		}
		P(b, "],\"offsets\":[");
		for (int k = 0; k < g->ncommits; k++) {
			const struct st_commit *c = &g->commits[k];
			P(b, "%s{\"topic\":", k ? "," : "");
			jstr(b, c->topic);
			P(b, ",\"partition\":%d,\"committed\":%lld,\"lag\":", (int)c->partition,
			  (long long)c->offset);
			if (c->lag < 0)
				P(b, "null}");
			else
				P(b, "%lld}", (long long)c->lag);
		}
		P(b, "]}");
	}
	P(b, "],\"transactions\":[");
	for (int i = 0; i < s->ntxns; i++) {
		const struct st_txn *x = &s->txns[i];
		P(b, "%s{\"topic\":", i ? "," : "");
		jstr(b, x->topic);
		P(b, ",\"partition\":%d,\"producer_id\":%lld,\"producer_epoch\":%d,\"first_offset\":%lld}",
		  (int)x->partition, (long long)x->producer_id, (int)x->epoch,
		  (long long)x->first_offset);
	}
	P(b, "],\"events\":[");
	for (int i = 0; i < s->nevents; i++) {
		P(b, "%s{\"unix_ms\":%lld,\"text\":", i ? "," : "", (long long)s->events[i].unix_ms);
		jstr(b, s->events[i].text);
		P(b, "}");
	}
	P(b, "],\"incomplete\":%s}\n", s->oom ? "true" : "false");
}

char *kaas_status_format(const struct kaas_status_snap *s, int json, size_t *len)
{
	struct kaas_mbuf b = { 0 };
	if (json)
		format_json(&b, s);
	else
		format_html(&b, s);
	if (b.oom || !b.p) {
		kaas_mbuf_free(&b);
		return NULL;
	}
	*len = b.len;
	return b.p;
}
