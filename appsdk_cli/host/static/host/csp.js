// @ts-check
// CSP violations the bootstrap reports from inside the widget: the event the inspector shows, the
// host-log line, and whether it broke the widget. Pure: no DOM, so `node --test` drives it.

/**
 * @param {Omit<AppsdkCspReport, "type"> & { type?: string }} report
 * @returns {{ event: AppsdkCspEvent, level: AppsdkLogLevel, text: string, loadFailure: string | null }}
 */
export function judgeCspViolation(report) {
  const where = report.source ? ` (${report.source}:${report.line})` : "";
  const directive = report.directive || "";
  const event = {
    directive,
    blockedURI: report.blocked || "",
    sourceFile: report.source || "",
    line: report.line ?? null,
    sample: report.sample || "",
    disposition: report.disposition || "enforce",
  };
  if (report.blocked === "eval") {
    // Libraries probe for eval and fall back when it throws (zod does, in every SDK-built widget);
    // it breaks only a widget that needs eval, which ChatGPT's CSP refuses too.
    return {
      event,
      level: "info",
      text: `CSP blocked eval by ${directive}${where}; fine if the widget only probes for it`,
      loadFailure: null,
    };
  }
  return {
    event,
    level: "error",
    text: `CSP blocked ${report.blocked || "an inline resource"} by ${directive}${where}`,
    // A blocked script or style leaves the widget broken; a blocked image or fetch may not.
    loadFailure: /^(script|style)-src/.test(directive)
      ? `the CSP blocked ${report.blocked || "an inline script or style"} (${directive})`
      : null,
  };
}
