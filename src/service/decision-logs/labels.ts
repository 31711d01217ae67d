/** --decision-log-label "a=1,b=2" read once, for the configuration's check and for the events' labels. */

/** The labels as an object (a later pair wins over an earlier one of the same name). */
export function operatorLabels(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of (text ?? "").split(",").filter(Boolean)) {
    const eq = pair.indexOf("=");
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}
