/**
 * What is wrong with a route template, in words a person reads at once ("unclosed `{` at character 12"),
 * instead of the schema's regular expression; also what the schema cannot say: a parameter name used twice
 * in one template, which the policy could never bind (two values for one name).
 */

const PARAMETER_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** The first problem of a template (characters counted from 1), or undefined when it is well-formed. */
export function templateProblem(template: string): string | undefined {
  if (!template.startsWith("/")) return "must start with /";
  const names = new Map<string, number>();
  let at = 1;
  for (const segment of template.slice(1).split("/")) {
    const start = at + 1;
    at = start + segment.length;
    if (segment === "") return `empty segment at character ${start} (// or a trailing /)`;
    const problem = segmentProblem(segment, start, names);
    if (problem) return problem;
  }
  return undefined;
}

function segmentProblem(segment: string, start: number, names: Map<string, number>): string | undefined {
  const open = segment.indexOf("{");
  const close = segment.indexOf("}");
  if (open === -1 && close === -1) return undefined;
  if (open === -1 || (close !== -1 && close < open)) return `\`}\` without \`{\` at character ${start + close}`;
  if (close === -1) return `unclosed \`{\` at character ${start + open}`;
  if (open !== 0 || close !== segment.length - 1)
    return `a parameter must be a whole segment: \`${segment}\` at character ${start}`;
  const name = segment.slice(1, -1);
  if (name.includes("{")) return `\`{\` inside a parameter at character ${start + 1 + name.indexOf("{")}`;
  if (name === "") return `empty parameter name \`{}\` at character ${start}`;
  if (!PARAMETER_NAME.test(name))
    return `parameter name "${name}" at character ${start + 1}: a letter, then letters, digits or _`;
  const earlier = names.get(name);
  if (earlier !== undefined)
    return `parameter {${name}} appears twice (characters ${earlier} and ${start}); each name may appear once`;
  names.set(name, start);
  return undefined;
}
