/**
 * The approvals section of the Devices view: the rules "Always allow" saved,
 * numbered as `magi approvals list` numbers them, each with the repository it
 * applies in, when it was saved and the question that saved it, and "Remove"
 * (what `magi approvals rm N` does). A removed rule's calls ask the owner again.
 */
import * as Api from "./api.js"
import { el, withCode } from "./dom.js"
import { relative } from "./card.js"
import { message } from "./view.js"

export const approvalsSection = (): { readonly node: HTMLElement; readonly load: () => Promise<void> } => {
  const list = el("ol", { class: "approval-rules" })
  const status = el("p", { class: "muted", attrs: { role: "status" } })
  const node = el(
    "section",
    { class: "approvals", attrs: { "aria-label": "Approvals" } },
    el("h2", {}, "Always allowed"),
    el(
      "p",
      { class: "muted intro" },
      ...withCode(
        'Tool calls these rules let through without asking you, saved by "Always allow" on an approval. The config\'s `[approvals]` rules are changed in the config.'
      )
    ),
    status,
    list
  )
  const load = async () => {
    try {
      const rules = await Api.listApprovalRules()
      const now = Date.now()
      status.textContent = rules.length === 0 ? "No saved rule: every tool call that needs permission asks you." : ""
      list.replaceChildren(
        ...rules.map((r) =>
          el(
            "li",
            { class: "approval-rule" },
            el("code", {}, r.rule),
            el("span", { class: "muted" }, ` in ${r.repo}`),
            el("span", { class: "muted" }, ` · saved ${relative(r.added_at, now)} from question ${r.question.slice(r.question.lastIndexOf("-") + 1)}`),
            el(
              "button",
              {
                attrs: { type: "button", "aria-label": `Remove ${r.rule}` },
                on: {
                  click: () => {
                    Api.removeApprovalRule(r.id).then(
                      () => void load(),
                      (e: unknown) => {
                        status.textContent = message(e)
                        void load()
                      }
                    )
                  }
                }
              },
              "Remove"
            )
          )
        )
      )
    } catch (e) {
      status.textContent = message(e)
    }
  }
  return { node, load }
}
