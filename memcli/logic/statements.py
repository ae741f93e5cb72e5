"""The statements of a conversation worth remembering (extract, docs/maintenance.md):
the user's turns split into sentences (memcli.logic.sentences), a cue at the start of
any clause of a sentence (memcli.logic.cues: "…, and also remember that …", "btw my …
is …", "对了，记住…"), each scored for importance and kept at ≥ KEEP_AT. Questions,
hypotheticals ("if I …", "如果…") are not statements; hedged or passing ones ("maybe",
"I think", "today", "可能") score HEDGE_PENALTY lower. With an LLM, the LLM extracts and
scores (`llm_candidates`). What the candidates do to the workspace is
memcli.logic.extract's decision.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memcli.adapters.messages import message_text
from memcli.core.models import normalize_text
from memcli.core.validate import strip_controls
from memcli.logic.changes import ALONE, CHANGES
from memcli.logic.cues import CJK, CUES, STATEMENTS, Hit, match, strip_filler
from memcli.logic.sentences import split_sentences
from memcli.logic.slots import asked_slot, category, fits

#: what one clause may say: a change first ("I moved to …"), then a plain statement
_SAID = [*CHANGES, *STATEMENTS, *ALONE]
_CHANGE_RULES = [*CHANGES, *ALONE]
KEEP_AT = 0.7
HEDGE_PENALTY = 0.2

#: where a clause may start inside a sentence
_CLAUSE = re.compile(
    r"[,;:，；：、]\s*|\s+[—–]+\s*|\s+-\s+|\s(?=(?:and|but|also|btw|oh|so|plus|since|because)\s)"
    r"|\s*[\u2600-\u27bf\U0001f000-\U0001faff][\ufe0f\u200d\u2600-\u27bf\U0001f000-\U0001faff]*\s+",
    re.I,
)
_HEDGES = re.compile(
    r"\b(maybe|might|perhaps|probably|possibly|not sure|i guess|i think|i suppose|kind of|"
    r"sort of|not really)\b|可能|也许|大概|好像|或许|说不定|我觉得",
    re.I,
)
_TRANSIENT = re.compile(
    r"\b(today|tonight|right now|at the moment|this morning|this afternoon|for now|"
    r"for a conference|on holiday|on vacation|(?<!a )while|"
    r"for the (?:weekend|day|night|holidays?)|for a (?:few|couple of) days|over the weekend|"
    r"for lunch|for dinner|for (?:this|that|the) (?:screenshot|demo|presentation|call|meeting|"
    r"recording)|(?:in|for|to edit|on) this (?:file|pr|branch|ticket|task|function|script)|"
    r"for (?:a|an|the) (?:[\w-]+\s+)?(?:conference|trip|meetup|workshop|offsite|wedding|visit|"
    r"event|summit|hackathon|talk|session|interview|course|training|festival)|until)\b"
    r"|今天|刚才|这会儿|暂时",
    re.I,
)
_HYPOTHETICAL = re.compile(
    r"\b(if|what if|suppose|supposing|imagine|assuming|hypothetically|let's say|say we)\b"
    r"|如果|假如|假设|要是|万一|假使",
    re.I,
)
#: a change planned, wished or weighed, not made ("thinking about selling …", "打算…")
_PLANNED = re.compile(
    r"\b(?:going to|gonna|planning|plan to|thinking (?:about|of)|considering|want to|wanna|"
    r"would like to|might|should|hope to|about to|wonder(?:ing)? if|not sure|"
    r"(?:trying to |can't |cannot )?decid(?:e|ing) (?:between|whether|if)|torn between|"
    r"debating (?:whether|between|if))\b"
    r"|打算|计划|准备|想要|我想|想换|想改|想搬|想试|考虑|要不要|会不会|可能会|也许",
    re.I,
)
#: a change dated ahead ("moving to Lisbon next month"); a fact may be ("my passport
#: expires next year")
_AHEAD = re.compile(
    r"\b(?:next (?:week|month|year|spring|summer|autumn|fall|winter)|tomorrow|soon)\b"
    r"|下周|下个月|明年|明天|过几天",
    re.I,
)
#: the past told as history ("back in 2019 …", "Prior to Globex, I was employed by …", "I
#: was at Initech for two years"): what was, not what is (a change said as one, "used to …,
#: … now", is a change rule's)
_HISTORY = re.compile(
    r"\b(?:back (?:in|then|when)|prior to|before (?:that|joining|moving)|in my (?:first|last|"
    r"previous|old|former) (?:job|role|company|team)|when i was|as a (?:kid|student|teenager)|"
    r"(?:at|in) (?:uni|university|college|grad school|high school))\b"
    r"|那会儿|那时候|的时候|当年",
    re.I,
)
#: a state said to have lasted, in the past ("I was employed by Initech for two years")
_LASTED = re.compile(
    r"\b(?:was|were)\b[^,;.]*\bfor\s+(?:\w+\s+){0,2}(?:years?|months?|decades?)\b", re.I
)
_NOW_SAID = re.compile(
    r"\b(?:now|these days|nowadays|currently|since|again)\b|现在|如今|目前", re.I
)
#: a thing done for one occasion ("using Chrome for this debugging session"): no state,
#: though a state said to hold still may be ("for this project I'm using Poetry as usual")
_FOR_THIS = re.compile(r"\bfor (?:this|that) [\w-]+", re.I)
#: a thing done once (Chinese: a verb, 了 and a measure word: "去看了场电影", "喝了杯奶茶")
_ONCE = re.compile(r"了[一两几]?[场杯次趟顿首篇段]")
#: what someone else said: hearsay ("Dana said …", "听说…", "我同事说…")
_HEARSAY = re.compile(
    r"\b(?:said(?! goodbye)|says|told me|tells me|heard|hears|claims|reckons)\b|听说|据说|"
    r"(?<![实错便再])说(?![实错一话明])",
    re.I,
)
#: a change someone else made ("my sister moved …", "我爸把他的车…", "本人配偶已…"); a fact
#: of the family is the person's own ("我的儿子叫小明")
_OTHER_SUBJECT = re.compile(
    r"^(?:(?:my|our|his|her|their)\s+(?:\w+\s+)?(?:brother|sister|wife|husband|partner|"
    r"spouse|dad|father|mom|mum|mother|son|daughter|friend|colleague|coworker|co-worker|"
    r"neighbou?r|cousin|uncle|aunt|roommate|flatmate|parents?|kids?)s?\b|(?:he|she|they)\b)"
    r"|^(?:我的?|本人的?)?(?:爸爸?|妈妈?|父亲|母亲|哥哥?|姐姐?|弟弟?|妹妹?|朋友|同事|老婆|老公|"
    r"妻子|丈夫|配偶|儿子|女儿|家人|邻居|室友)|^(?:他|她)",
    re.I,
)
#: a change made for someone else ("got a Tesla for my wife", "给我妈买了辆车")
_FOR_SOMEONE = re.compile(
    r"\bfor (?:my|our) (?:wife|husband|partner|son|daughter|kids?|children|mom|mum|dad|"
    r"parents?|brother|sister|friend|girlfriend|boyfriend|grandma|grandpa)\b"
    r"|给(?:我)?(?:老婆|老公|爸爸?|妈妈?|儿子|女儿|孩子|父母)",
    re.I,
)
#: an instruction to the assistant ("Switch the CI job to …", "更新 CI 配置，改用 …"): its
#: clauses say nothing of the person unless they name them ("Set my editor to Zed")
_IMPERATIVE = re.compile(
    r"^(?:please\s+|pls\s+)?(?:update|rename|change|switch|migrate|move|set|add|remove|delete|"
    r"replace|convert|upgrade|bump|revert)\b"
    r"|^(?:请|麻烦)?(?:把|帮我|帮忙|更新|修改|改一下|删除|删掉|添加|换一下|切换|升级)",
    re.I,
)
#: an experience, not a present state: "我在腾讯工作过", "用过 Vim", "I've been to Lisbon"
_EXPERIENCED = re.compile(
    r"(?:[用在住开喝写做干待去学](?:了)?过|(?:工作|上班|生活|使用)过)(?!来|去|年|节|敏|度|程|期)"
    r"|\b(?:i've|i have|we've|we have) (?:been to|visited|tried)\b",
    re.I,
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|me|my|we|we're|we've|our)\b|(?<![帮给让])我|本人", re.I
)
#: an answer that says no to the assistant's question: what the question names holds no more
_DENIED = re.compile(
    r"(?:no|nope|nah|not any ?more|no longer|not really)\b(?!\s+(?:wait|problem|worries|thanks))"
    r"|(?:不是|没有|不在了|不用了|不开了|不了|不再|早就不)",
    re.I,
)
#: the assistant's words about the person ("Are you still at Globex?"), not an offer of its
#: own ("Do you want me to use pytest?", "Should I …")
_ABOUT_YOU = re.compile(r"\b(?:you|your|you're)\b|你", re.I)
_OFFER = re.compile(
    r"\b(?:want me to|like me to|should i|shall i|can i|may i|let me|i'll|i will)\b"
    r"|要我|需要我|我来|我帮你|我可以",
    re.I,
)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|can|could|would|will|should|is|are|was|were|what|why|how|where|when|"
    r"who|which|have you|has)\b",
    re.I,
)
_REQUEST = re.compile(r"^(?:can|could|would|will) you (?:please )?(?:remember|note)\b", re.I)


#: said so as to mean the opposite ("I love Jenkins, said no one ever")
_SARCASM = re.compile(r"\bsaid no ?(?:one|body)(?: ever)?\b|\byeah,? right\b", re.I)
#: made-up data, an example: of no one ("Note: the user in the test fixtures works at …")
_MADE_UP = re.compile(
    r"\b(?:fake|dummy|made[- ]up|placeholder)\b|\b(?:mock|sample|test|example) (?:data|users?)\b"
    r"|\btest fixtures?\b|示例|假数据|测试数据",
    re.I,
)


def _is_question(sentence: str) -> bool:
    s = sentence.rstrip(" \t.!。！~…")
    return (
        s.endswith(("?", "？"))
        or bool(CJK.search(s) and s.endswith(("吗", "呢", "么")))
        or bool(_QUESTION_START.match(s))
    )


def statements(sentence: str) -> list[tuple[str, str, float]]:
    """(text, type, importance) of the explicit statements of one sentence: a cue at the
    start of any clause; none from a question (unless it asks to remember) or a
    hypothetical; hedged or passing ("today") statements score HEDGE_PENALTY lower."""
    return [(hit.text, hit.type, score) for hit, score in said_in(sentence)]


def said_in(sentence: str) -> list[tuple[Hit, float]]:
    """The statements of one sentence (memcli.logic.cues.Hit: with the old value it names
    as replaced, "I live in Leipzig now, not Munich" -> "Munich", its slot and value when
    its rule knows them), each with its importance once hedges are counted."""
    if _SARCASM.search(sentence) or _MADE_UP.search(sentence):
        return []
    question = _is_question(sentence)
    instruction = bool(_IMPERATIVE.match(strip_filler(sentence)))
    found: list[tuple[Hit, float]] = []
    consumed = 0
    starts = [0] + [m.end() for m in _CLAUSE.finditer(sentence)]
    for start in starts:
        if start < consumed:
            continue
        clause = strip_filler(sentence[start:])
        offset = len(sentence) - len(clause)
        if question and not _REQUEST.match(clause):
            continue
        if _HYPOTHETICAL.search(sentence[:offset]):
            continue
        hit = match(CUES, clause, _SAID) or match(_SAID, clause)
        if hit is None:
            continue
        consumed = offset + hit.end
        said = sentence[start:consumed]
        if _PLANNED.search(said):
            continue
        upto = min((s for s in starts if s > consumed), default=len(sentence))
        others = _OTHER_SUBJECT.search(said) or _FOR_SOMEONE.search(sentence[start:upto])
        if (others or _AHEAD.search(said) or _HEARSAY.search(said)) and match(
            _CHANGE_RULES, clause
        ) is not None:  # of a change only: "my doctor says I'm allergic to …" is one's own
            continue
        if _EXPERIENCED.search(sentence[start : consumed + 2]):  # "…工作过": past the match
            continue
        if _ONCE.search(said) or (
            not hit.drop
            and (_HISTORY.search(sentence[:upto]) or _LASTED.search(sentence[start:upto]))
            and not _NOW_SAID.search(sentence[start:upto])
        ):  # what was, or was done once: no state of the person's now
            continue
        if instruction and not _FIRST_PERSON.search(said):
            continue
        # a hedge counts up to where the next clause starts ("… any more I guess")
        hedged = sentence[start:upto]
        doubts = {m.group().casefold() for m in _HEDGES.finditer(hedged)}
        doubts |= {m.group().casefold() for m in _TRANSIENT.finditer(hedged)}
        if hit.drop != "held":
            doubts |= {m.group().casefold() for m in _FOR_THIS.finditer(hedged)}
        penalty = HEDGE_PENALTY * min(len(doubts), 2)  # "not really …, I guess": twice
        found.append((hit, round(hit.importance - penalty, 2)))
    return found


#: the ways a statement says its value holds no more (memcli.logic.cues.Rule.drop; "passing":
#: only with a new value said beside it, memcli.logic.extract)
GIVEN_UP = ("own", "frame", "named", "passing")


@dataclass(frozen=True)
class Candidate:
    """A statement to remember: its stored text, type and importance."""

    text: str
    type: str
    importance: float
    said: str  # the sentence it came from
    replaces: str = ""  # the old value it names ("…, not Munich"): its entry is the target
    slot: str = ""  # the slot it gives a value, when its rule knows (memcli.logic.slots)
    value: str = ""  # the new value ("Initech"), when its rule knows
    drop: str = ""  # it says only that `replaces` holds no more (memcli.logic.cues.Rule)
    turn: int = 0  # the message it came from: a drop and a new value of one turn are one


#: how a value the person gives as an answer is said, by the slot asked for
_ANSWERED = {
    "employer": ("Works at {}", "在{}工作"),
    "home": ("Lives in {}", "住在{}"),
    "manager": ("User's manager is {}", "用户的经理是{}"),
}
#: words of an answer that is no value ("yes", "good question", "not sure")
_NOT_AN_ANSWER = re.compile(
    r"\b(?:yes|yeah|yep|no|nope|nah|ok|okay|sure|thanks|thank|not|none|nothing|same|idk|"
    r"dunno|good|question|why|what|it|that|this|you|i|me|my|we|the)\b|[是对好嗯不没谢]",
    re.I,
)


def _answer(asked: str, said: str, turn: int, found: list[Candidate]) -> list[Candidate]:
    """A value given in answer to the assistant's question about the person ("What editor
    are you using these days?" "Zed"; "Where do you work?" "Initech"): a new value of the
    slot asked for — a value the lexicon knows of that slot, or a name (capitalised, or
    Chinese) for a slot it has no values of. The value is the person's, never the
    question's."""
    slot = asked_slot(asked) if re.search(r"[?？]\s*$", asked) else ""
    if not slot:
        return found
    mine = [c for c in found if c.turn == turn]
    if any(not c.drop or c.drop in GIVEN_UP or c.drop == "held" for c in mine):
        return found  # a statement of its own, a change, "还在杭州": not a bare answer
    value = " ".join(strip_controls(said).strip().rstrip(" .!。！~").split())
    if not value or len(value.split()) > 4 or _NOT_AN_ANSWER.search(value):
        return found
    known = category(value)
    if known:
        if not fits(value, slot):
            return found
    elif slot not in _ANSWERED or not (value[:1].isupper() or CJK.match(value)):
        return found
    english, chinese = _ANSWERED.get(slot, ("Uses {}", "用{}"))
    text = (chinese if CJK.search(value) or CJK.search(asked) else english).format(value)
    rest = [c for c in found if c.turn != turn]
    return [*rest, Candidate(text, "fact", 0.85, said, "", slot, value, "", turn)]


def candidates(messages: Sequence[dict]) -> list[Candidate]:
    """Explicit statements the user made, scored; those below KEEP_AT are dropped; a value
    given in answer to a question about the person (`_answer`)."""
    found: list[Candidate] = []
    seen: set[str] = set()
    asked = ""
    for turn, message in enumerate(messages):
        if message.get("role") not in ("user", "human"):
            asked = strip_controls(message_text(message)) if message.get("role") else ""
            continue
        said = strip_controls(message_text(message))
        if _ABOUT_YOU.search(asked) and not _OFFER.search(asked) and _DENIED.match(said):
            found.append(
                Candidate("No longer so", "correction", 0.85, said, asked, drop="denied", turn=turn)
            )
        question = asked if _ABOUT_YOU.search(asked) and not _OFFER.search(asked) else ""
        asked = ""
        for sentence in split_sentences(said):
            if len(sentence) < 3:
                continue
            for hit, score in said_in(sentence):
                key = normalize_text(hit.text)
                if score >= KEEP_AT and key not in seen:
                    seen.add(key)
                    found.append(
                        Candidate(
                            hit.text,
                            hit.type,
                            score,
                            sentence,
                            hit.replaces,
                            hit.slot,
                            hit.value,
                            hit.drop,
                            turn,
                        )
                    )
        if question:
            found = _answer(question, said, turn, found)
    return found


LLM_SYSTEM = (
    "You extract long-term memories about the user from a conversation. Return a JSON "
    'object {"memories": [{"text": str, "type": one of preference, fact, pattern, '
    'correction, skill, lesson, "importance": number 0-1, "replaces": the old value the '
    'user says is no longer true, or ""}]}. Only lasting, explicit information; write each '
    'memory as a short third-person statement of the new fact alone ("Lives in Leipzig", '
    'not "Lives in Leipzig, not Munich"); importance 0.9 for things the user asked to '
    "remember or corrected, lower for passing remarks."
)
TYPES = ("preference", "fact", "pattern", "correction", "skill", "lesson")


def llm_candidates(messages: Sequence[dict], llm) -> list[Candidate]:  # noqa: ANN001 - LLMClient
    """Candidates scored by the LLM; raises LLMError on an answer of the wrong shape."""
    from memcli.adapters.llm import LLMError

    transcript = "\n".join(
        f"{m.get('role')}: {strip_controls(message_text(m))}"
        for m in messages
        if m.get("role") in ("user", "human", "assistant", "ai") and not m.get("tool_calls")
    )
    answer = llm.chat_json(LLM_SYSTEM, transcript)
    items = answer.get("memories") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        raise LLMError('the LLM answer has no "memories" list; nothing was changed')
    found, seen = [], set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise LLMError("an LLM memory has no text; nothing was changed")
        try:
            importance = float(item.get("importance", 0))
        except (TypeError, ValueError):
            raise LLMError(
                "an LLM memory has a non-numeric importance; nothing was changed"
            ) from None
        entry_type = item.get("type") if item.get("type") in TYPES else "fact"
        text = " ".join(item["text"].split())
        if text and importance >= KEEP_AT and normalize_text(text) not in seen:
            seen.add(normalize_text(text))
            replaces = item.get("replaces") if isinstance(item.get("replaces"), str) else ""
            score = round(min(importance, 1.0), 2)
            found.append(Candidate(text, entry_type, score, "(llm)", " ".join(replaces.split())))
    return found
