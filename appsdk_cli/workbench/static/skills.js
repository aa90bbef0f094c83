// @ts-check
// The server's skills (Skills over MCP, SEP-2640), under the tools: each skill's name, description and
// files with their sha256 digests, as skills/list gives them; opening one shows its SKILL.md as the
// server sent it, checked against its listed digest. A skill is server text meant for a model: it is
// shown as text (textContent), never as HTML.

import { $, api, messageOf } from "./bench.js";

/** @param {string} tag @param {string} [className] @param {string} [text] */
function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Read skills/list again and redraw the list (hidden while the server declares no skills). */
export async function loadSkills() {
  /** @type {AppsdkSkillListing} */
  let listing;
  try {
    listing = await api("/api/skills");
  } catch (error) {
    listing = { declared: true, skills: [], error: messageOf(error) };
  }
  showSkills(listing);
}

/** @param {AppsdkSkillListing} listing */
export function showSkills(listing) {
  const section = $("skills");
  section.hidden = !listing.declared;
  $("skill-count").textContent = listing.skills.length ? String(listing.skills.length) : "";
  const error = $("skills-error");
  // A server that wants a sign-in is not broken: said as the tools say it, not in red.
  error.hidden = !listing.error && !listing.signIn;
  error.classList.toggle("wants-sign-in", Boolean(listing.signIn));
  error.textContent = listing.error
    ? `Could not list the skills: ${listing.error}`
    : listing.signIn
      ? `Sign in to see the skills: ${listing.signIn}`
      : "";
  const list = $("skill-list");
  list.replaceChildren(...listing.skills.map(skillItem));
}

/** @param {AppsdkSkill} skill */
function skillItem(skill) {
  const front = skill.frontmatter || {};
  const item = make("li", "skill");
  item.dataset.uri = skill.uri;
  const details = /** @type {HTMLDetailsElement} */ (make("details"));
  const summary = make("summary");
  summary.append(make("span", "skill-name", String(front.name ?? "?")));
  details.append(summary);
  if (typeof front.description === "string") details.append(make("p", "skill-description", front.description));
  details.append(make("code", "skill-uri", skill.uri));
  const files = make("ul", "skill-files");
  if (skill.resources === "dynamic") files.append(make("li", "skill-file", "dynamic: no files listed, no digests"));
  else
    for (const file of skill.resources || []) {
      const row = make("li", "skill-file");
      row.append(make("code", "skill-file-uri", file.uri));
      row.append(make("span", "skill-file-size", `${file.size} bytes`));
      row.append(make("code", "skill-digest", file.digest));
      files.append(row);
    }
  details.append(files);
  const text = make("pre", "skill-text");
  const status = make("p", "skill-status");
  status.setAttribute("role", "status");
  details.append(status, text);
  details.addEventListener("toggle", () => {
    if (details.open && !text.textContent) showSkillFile(skill.uri, text, status);
  });
  item.append(details);
  return item;
}

/** @param {string} uri @param {HTMLElement} text @param {HTMLElement} status */
async function showSkillFile(uri, text, status) {
  status.textContent = "reading…";
  try {
    /** @type {AppsdkSkillFile} */
    const file = await api(`/api/skill-file?uri=${encodeURIComponent(uri)}`);
    text.textContent = file.text ?? "";
    status.className = `skill-status ${file.verified ? "verified" : "unverified"}`;
    status.textContent = file.verified ? "✓ matches its sha256 digest and size" : `✗ ${file.problem}`;
  } catch (error) {
    status.className = "skill-status unverified";
    status.textContent = `Could not read it: ${messageOf(error)}`;
  }
}
