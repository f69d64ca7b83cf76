"""Word lists the offline rules rely on: function words, boilerplate labels, verbs, generic heads."""

from __future__ import annotations

# Words that never make a name on their own and that end a key phrase.
FUNCTION_WORDS = frozenset(
    """
    a about above across after again against all almost along also although always am among an
    and another any anyone anything are around as at be because been before being below between
    both but by can cannot could did do does doing done down during each either else enough even
    ever every few for former from further had has have having he her here hers herself him himself his
    how however i if in into is it its itself just latter least less let like many may me might more
    most much must my myself neither no nor not now of off often on once one only onto or other
    others otherwise our ours out over own per perhaps rather same several shall she should since
    so some such than that the their theirs them themselves then there thereby therefore these
    they this those though through thus to together too toward towards under unless until up upon
    please us very via was we were what whatever when whenever where whereas whether which while who
    whom whose why will with within without would yet you your yours yourself e.g i.e etc vs
    """.split()
)

# Capitalised words that start sentences or label document furniture, never a subject.
BOILERPLATE = frozenset(
    """
    note notes example examples table tables figure figures chapter chapters section sections
    see also warning warnings tip tips important caution appendix part step steps contents
    introduction overview summary references reference index page pages prerequisites tutorial
    yes no true false ok okay todo fixme default defaults description details detail options
    option usage syntax parameters parameter returns return value values result results
    compatibility notes example(s) listing question answer abstract preface conclusion
    first second third finally next previous home up prev
    """.split()
)

WEEKDAYS_MONTHS = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday january february march april may
    june july august september october november december jan feb mar apr jun jul aug sep sept
    oct nov dec
    """.split()
)

# Sentence-initial capitalised words of ordinary prose: dropped from the front of a name.
SENTENCE_STARTERS = FUNCTION_WORDS | frozenset(
    """
    additionally again alternatively because before besides consequently currently each every
    first for further furthermore generally hence here however if in instead later likewise
    meanwhile moreover most much nevertheless next normally note now often once only otherwise
    since similarly so some sometimes still then there therefore these this those thus today
    typically unfortunately usually when where while with without yet use using see consider
    many most all any both new old other another suppose assume since unlike since
    """.split()
)

# Common verbs in the forms they take in technical prose; a sentence needs one to be a claim
# and they end a key phrase.
VERBS = frozenset(
    """
    is are was were be been being has have had do does did can could may might must shall should
    will would use uses used allow allows allowed provide provides provided contain contains
    contained require requires required store stores stored write writes written read reads
    return returns returned create creates created run runs running make makes made include
    includes included support supports supported enable enables enabled prevent prevents keep
    keeps kept hold holds held ensure ensures ensured depend depends implement implements
    implemented extend extends extended replace replaces replaced produce produces produced
    generate generates generated cause causes caused define defines defined describe describes
    described represent represents controls control determine determines determined specify
    specifies specified become becomes became take takes took taken give gives gave given get
    gets got need needs needed consist consists call calls called know known mean means meant
    refer refers referred set sets apply applies applied remove removes removed add adds added
    change changes changed perform performs performed manage manages managed handle handles
    handled reduce reduces reduced increase increases increased improve improves improved
    occur occurs occurred start starts started stop stops stopped send sends sent receive
    receives received build builds built load loads loaded save saves saved lets let show shows
    shown work works worked act acts belong belongs rely relies relied see seen found finds
    find lead leads led wait waits appear appears follow follows followed check checks checked
    go goes went gone come comes came seem seems seemed try tries tried want wants wanted
    say says said put puts tell tells ask asks look looks turn turns fail fails failed
    """.split()
)

# Heads of key phrases too vague to name a subject ("this way", "large number").
GENERIC_HEADS = frozenset(
    """
    way ways thing things case cases number numbers kind kinds lot lots part parts time times
    example examples use uses end ends point points fact facts form forms sort sorts set
    amount amounts one ones bit bits place places side sides level levels order idea ideas
    reason reasons result results matter matters sense area areas aspect aspects manner
    detail details information section chapter note table figure purpose purposes question
    questions moment deal item items something anything everything nothing default defaults
    value values option options step steps list lists
    """.split()
)

# Words that only qualify: a phrase may not start with them and still name something.
WEAK_MODIFIERS = frozenset(
    """
    new old same different various several other many more most less least few large small
    main certain particular specific given following previous next good better best bad worse
    worst high higher low lower important possible available current entire whole full simple
    usual normal typical general own additional separate single multiple whole actual
    equal able unable necessary unnecessary similar true false likely unlikely due
    sure aware useful safe unsafe free ready
    """.split()
)

ABBREVIATIONS = frozenset(
    """
    e.g i.e eg ie etc vs cf approx fig figs no nos vol ch sec eq dr mr mrs ms prof st jr sr inc ltd co
    corp al resp incl esp ca op ed eds pp p ex viz
    """.split()
) - {"etc"}

# Words of a quantity ("200 million transactions", "three replicas"): a phrase they open or
# end measures something, it does not name it (hyphened, they name: "two-phase commit").
NUMBER_WORDS = frozenset(
    """
    two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty
    seventy eighty ninety hundred hundreds thousand thousands million millions billion billions
    trillion dozen dozens
    """.split()
)

# Units and generic abbreviations: capitalised like names, but never the subject of a page.
UNITS = frozenset(
    """
    b kb mb gb tb pb eb kib mib gib tib pib bit bits byte bytes kbit mbit gbit kbps mbps gbps
    ns us µs ms s sec secs min mins h hr hrs ms khz mhz ghz hz rpm iops qps tps rps
    """.split()
)
GENERIC_ACRONYMS = frozenset(
    """
    id ids i/o io os cpu cpus gpu ram rom ui gui faq faqs etc ok na n/a tbd tba am pm aka ie eg
    vs no yes
    """.split()
)

# Participles that open a phrase of their own ("an object representing ...", "the time using
# ..."): never the head of a name.
PARTICIPLE_PREPOSITIONS = frozenset(
    """
    using representing containing including following according regarding concerning describing
    having being making giving taking getting returning calling specifying showing holding
    """.split()
)
