// How a question's choices read, so approve and deny never look the same:
// `go` (approve, yes, proceed…), `stop` (deny, no, cancel…) and `danger`
// (a choice that destroys: delete, drop, force…). Unknown words are plain.

export type Tone = "go" | "stop" | "danger" | "";

const DANGER = /\b(delete|drop|destroy|wipe|purge|erase|truncate|force|overwrite|reset|kill|rm|nuke|remove)\b/i;
const STOP = /\b(no|deny|denied|reject|decline|cancel|stop|abort|halt|hold|wait|later|skip|never|refuse|don'?t|do not|not now)\b/i;
const GO = /\b(yes|y|ok|okay|approve|approved|accept|confirm|proceed|continue|go|allow|ship|merge|deploy|sure|do it|lgtm)\b/i;

export function tone(choice: string): Tone {
  if (DANGER.test(choice)) return "danger";
  if (STOP.test(choice)) return "stop";
  if (GO.test(choice)) return "go";
  return "";
}

/** The class of a choice's button. */
export const choiceClass = (choice: string): string => {
  const t = tone(choice);
  return t ? `choice choice-${t}` : "choice";
};
