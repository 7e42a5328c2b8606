"""Solve budgets: how much `agentk solve` searches, from a CPU smoke run to the paper's settings, counted in work
(epochs, trials, rows) rather than seconds. No numerical imports, so that the CLI and the curriculum can list and
validate budgets without loading the solver's numerical stack.

The time model. A network solution's work is planned before it trains (plan_network), from the data (fit,
validation and test rows; which inputs are embedded once by a frozen encoder and which train an encoder) and from
the machine (CPU cores, CUDA), never from a clock: the same machine then runs the same epochs and trials, and
gives the same result, whatever else it runs. The plan models a trial's seconds as

    set-up + epochs x (fit rows / training speed + validation rows / evaluation speed + per-epoch overhead)

plus, once per network, the frozen encoders' embedding of every row (its later trials and its refit reuse it), and
a few seconds per trial that HEBO's model suggests (SUGGEST_S). The embedding is bounded too: past EMBED_LIMIT
times the budget's network seconds, the network embeds and learns from a sample of its fit rows (the rows it is
scored on, stop, validation and test, stay whole), and where those alone are past it, it is left out with its
reason. The speeds are MODEL_SPEED's: samples per second per CPU core (up to 8 cores) or on one CUDA GPU, for a
trained resnet18 at 64 px (scaled by the pixel count at other sizes), a trained MiniLM text encoder at 128 tokens,
and the fusion MLP on cached features or tabular inputs; evaluation runs about three times faster than training; a
frozen image encoder's embedding no faster, a frozen MiniLM's about four times faster than its training (measured).
The figures are measured: this project's 2-core CPU trains resnet18 at 64 px at 56-74 images/s, the tiny CNN that
trains when no pretrained weights exist at 146-274 images/s at 48 px and 383-432 at 32 px (planned at its own speed
and side: tools/modality_img.py's image_encoder tells the plan), and the fusion head on cached features at
10,000-25,000 rows/s on one thread; on a GPU, benchmarks/model_speed.py measured every figure on
an H200 (MODEL_SPEED's comment), and benchmarks/gpu_throughput.py resnet18 at 224 px at 9,000 images/s in
train_fusion on an H100 (a plain bf16 loop: 11,440). The budget gives each network network_seconds of modelled work
besides the embedding (which no plan avoids), and a network that trains an encoder more as its fit rows grow past
GROWTH_ROWS, up to the budget's grown_network_seconds (network_work); the plan keeps the budget's n_trials and max_epochs when they fit,
else first lowers the trials (the default configuration is a sound start; below HEBO's random initial design plus
one the trials are a random search, and the plan says so), then the epochs (down to min_epochs), and last the rows
an epoch trains on (a fresh random sample of the fit rows each epoch), so that a large competition on a CPU still
gets min_epochs passes. Early stopping (patience epochs without progress on the stop rows: a better score, or the
same with a lower loss) ends most trials before their planned epochs, so the estimate is an upper bound; the work a
finished trial leaves unspent, counted from the epochs it ran, pays for further trials (NetworkPlan.affordable), up
to the budget's n_trials: a 16,000 x 200 table planned one trial of 30 epochs at 58 s, and its trial stopped after 6
epochs in 4 s. Refitting the chosen trial on every row adds one more run of at most as many epochs.

The wall clock bounds what the work does not: the solve ends within its budget's `bound` whatever the machine's
load, each solution running under what is left of it (agentk/core/deadline.py). Besides, each training run stops
at SAFETY times its planned seconds (at least
MIN_SAFETY_S), beyond what a busy machine needs (on this project's shared 2-core machine at load 13 a trained CNN
ran 8 times slower than planned with the solver's passive OpenMP waits, 50 times with spinning ones); when it
triggers, the network's plan and the console say so. AutoGluon's autogluon_time is modelled work too: AutoGluon has
no work budget of its own (its time limit decides how many models it fits), so tools/autogluon_plan.py chooses
its models from the rows, columns, classes and cores before it fits, and its time limit is only a safety cap.

With the standard budget on one H100: an arena competition of 240 images (192 to fit) plans 8 trials of 30
epochs per network in seconds of training steps, per-trial set-up dominating; a real one of 25,000 images (20,000
to fit) about 8 x 30 x 20,000 / 8,000 s = 10 min per network at resnet18's modelled speed, plus the refit."""

from __future__ import annotations

from dataclasses import dataclass

from agentk.modalities import IMAGE, TABULAR, TEXT


@dataclass(frozen=True)
class SolveBudget:
    name: str
    max_epochs: int  # the most epochs of one trial
    min_epochs: int  # the fewest a plan gives a trial: rows per epoch go down before epochs go below this
    patience: int  # early stopping: epochs without progress on the stop rows (tools/fusion.py) before a trial stops
    n_trials: int  # the most trials per network, the default configuration included
    network_seconds: float  # modelled work per network (trials and refit), at the machine's modelled speed
    batch_size: int
    blend_after: int  # blend once this many solutions exist
    autogluon_time: float  # modelled seconds of the AutoGluon tool's models (tools/autogluon_plan.py)
    autogluon_presets: str
    image_size: int
    finetune_image: bool  # train the image backbone end to end; else frozen, embeddings cached
    finetune_text: bool  # the same for the text encoder
    networks: tuple[dict, ...] = ({},)  # FusionConfig overrides, one network solution each
    # a network that trains an encoder gets network_seconds x fit rows / GROWTH_ROWS of work, up to this (None:
    # network_seconds at every size): a fixed 75 s trained the tiny CNN on 128 of 12,800 images an epoch
    grown_network_seconds: float | None = None
    # the most modelled work AutoGluon's share grows to with a large table (None: no ceiling); past it, its first
    # boosted models fit on a sample of the fit rows (tools/autogluon_tool.py): CatBoost alone ran 7 minutes on
    # 320,000 rows of 64 columns on 2 cores, and as long again in the refit
    autogluon_most: float | None = None
    # wall seconds the solve ends within, whatever the machine's load: every solution runs under what is left of
    # them (agentk/core/deadline.py), and a solve past them moves on to its end
    bound: float = 15 * 60

    @property
    def wall_cap(self) -> float:
        """Wall seconds after which `agentk solve` stops the solver's whole tree: a little past the bound, for a
        step that did not stop on its own (the best submission finished so far is in place)."""
        return self.bound * 1.05 + 60


PRESETS = {
    # CPU, a few minutes: the default here and in CI. Frozen encoders train in seconds on cached embeddings, so
    # their network gets HEBO's full search; the second network trains its image backbone (offline it starts from
    # random weights, so frozen features alone are weak) and on a CPU affords fewer trials.
    "quick": SolveBudget(
        "quick",
        max_epochs=30,
        min_epochs=12,
        patience=5,
        n_trials=6,
        network_seconds=75,
        batch_size=32,
        blend_after=2,
        autogluon_time=60,
        autogluon_most=300,
        autogluon_presets="medium_quality",
        image_size=64,
        finetune_image=False,
        finetune_text=False,
        networks=({}, {"finetune_image": True}),
        grown_network_seconds=600,
    ),
    # a workstation or one GPU, an hour or two
    "standard": SolveBudget(
        "standard",
        max_epochs=30,
        min_epochs=15,
        patience=5,
        n_trials=8,
        network_seconds=1800,
        batch_size=32,
        blend_after=3,
        autogluon_time=900,
        autogluon_presets="good_quality",
        image_size=160,
        finetune_image=True,
        finetune_text=True,
        networks=({}, {"image_backbone": "efficientnet_b0"}, {"fusion_hidden": 512, "dropout": 0.3}),
        bound=8 * 3600,
    ),
    # the paper's Table 5
    "paper": SolveBudget(
        "paper",
        max_epochs=30,
        min_epochs=30,
        patience=5,
        n_trials=20,
        network_seconds=36000,
        batch_size=32,
        blend_after=3,
        autogluon_time=4 * 3600,
        autogluon_presets="best_quality",
        image_size=224,
        finetune_image=True,
        finetune_text=True,
        networks=({}, {"image_backbone": "efficientnet_b0"}, {"image_backbone": "convnext_tiny"}),
        bound=7 * 24 * 3600,
    ),
}
# which inputs a FusionConfig field concerns: a network whose overrides only touch absent inputs is skipped
FIELD_INPUT = {
    "image_backbone": IMAGE.name,
    "image_size": IMAGE.name,
    "finetune_image": IMAGE.name,
    "pretrained": IMAGE.name,
    "text_model": TEXT.name,
    "max_length": TEXT.name,
    "finetune_text": TEXT.name,
}

# Modelled training speeds in samples per second (see the module's docstring): per CPU core, and on one GPU.
# Images at 64 px on a CPU, 224 px on a GPU; the pixel count scales them, except the tiny CNN's on a GPU. "tiny
# image": the tiny CNN that trains when no pretrained weights exist (tools/modality_img.py). The CPU image figures
# are this project's 2-core CPU's (2026-11-27): benchmarks/model_speed.py gave resnet18 56-74 images/s at 64 px
# (28-37 per core), the tiny CNN 226-274 at 48 px and 383-432 at 32 px; the arena's quick solves trained the tiny
# CNN at 228 (dogs-vs-cats) and 146 (leaf, beside 192 table columns) images/s at 48 px and 410 (aerial) at 32 px:
# 41-64 per core at 64 px. They were 75 and 90, measured on a faster machine, and planned leaf's tiny CNN at 72 s
# where it ran 157. The text figure stays: MiniLM trained at 7-9 texts/s there (modelled 24), but on a CPU its
# frozen embedding, which the plan prices at the training speed, ran 121/s (jigsaw: 1,600 texts in 13.2 s), so
# lowering it would overstate quick's frozen text embedding even more. The GPU figures are
# benchmarks/model_speed.py's on an H200 (train_fusion, bf16), taken down to about what an H100 gives: resnet18 at
# 224 px 10,500-10,800 images/s (an H100: 9,000); the tiny CNN 70,000-99,000 at 48 px and 84,000 at 32 px, bound by
# per-step overhead, not pixels, so not scaled by them; MiniLM trained at 128 tokens 9,400 texts/s; the fusion MLP
# on 64 columns 167,000 rows/s.
MODEL_SPEED = {
    "cpu": {"image": 35.0, "tiny image": 50.0, "text": 12.0, "frozen text": 50.0, "features": 15_000.0},
    "cuda": {"image": 8_000.0, "tiny image": 60_000.0, "text": 7_500.0, "frozen text": 22_500.0, "features": 150_000.0},
}
REFERENCE_PX = {"cpu": 64, "cuda": 224}
MAX_CORES = 8  # a batch's convolutions stop gaining from more CPU cores about here
EVAL_FACTOR = 3.0  # evaluation and frozen embedding (no gradients) run this many times faster than training
EPOCH_OVERHEAD_S = 0.05  # per epoch: shuffling, the validation metric, keeping the best weights
TRIAL_OVERHEAD_S = 1.0  # per training run: building the network and its inputs
SUGGEST_S = 4.0  # per trial HEBO's model suggests: fitting its GP and searching its acquisition (one CPU thread)
# a frozen encoder's embedding may be modelled at most at this many times the budget's network_seconds: past it the
# network embeds and learns from a sample of its learning rows (the validation, stop and test rows stay whole), and
# when those alone are past it, it is left out with its reason (the classical candidates cover the input). 100,000
# texts on 2 cores were planned at 5,283 s for the quick budget, nearly all of it embedding (issue 49). The frozen
# text speed ("frozen text") is measured: MiniLM embedded 121 texts/s on this project's 2-core CPU (jigsaw: 1,600
# texts in 13.2 s), where it trains at 7-9; a frozen image encoder embeds no faster than it trains (measured)
EMBED_LIMIT = 8.0
MIN_SAMPLE = 2_000  # the fewest learning rows a sampled network learns from: fewer, and it is left out
MIN_WATCHED = 2_000  # the fewest stop rows a trained encoder's plan scores each epoch (AUC's error on them ~0.01)
GROWTH_ROWS = 2_500  # fit rows from which a trained encoder's work grows with them (SolveBudget.grown_network_seconds)
SAFETY = 30.0  # a training run stops at this many times its planned seconds: a runaway, not a busy machine
MIN_SAFETY_S = 300.0


@dataclass(frozen=True)
class Machine:
    cores: int
    cuda: bool

    def describe(self) -> str:
        return "one CUDA GPU" if self.cuda else f"{self.cores} CPU cores"


@dataclass(frozen=True)
class NetworkPlan:
    """The work of one network solution, planned before it trains; what plan.json records and the console shows."""

    trials: int  # those the work affords when every trial runs its most epochs
    design: int  # HEBO's random initial design: this many observations before its model suggests
    epochs: int  # the most per trial (early stopping usually ends a trial sooner)
    patience: int
    fit_rows: int
    val_rows: int
    epoch_rows: int | None  # rows trained per epoch, a fresh sample of the fit rows each time; None: all of them
    refit_rows: int  # 0: no refit
    trained: str  # what trains on every batch
    trial_seconds: float  # modelled, at the most epochs
    seconds: float  # modelled, every trial and the refit
    budget_seconds: float  # network_work plus the frozen embedding: seconds exceeds it only at the fewest rows
    safety_cap: float  # wall seconds after which one training run stops (a runaway)
    machine: str
    max_trials: int = 0  # the budget's n_trials: more than `trials` run when early stopping leaves the work for them
    trial_setup_seconds: float = 0.0  # modelled, of one trial besides its epochs
    epoch_seconds: float = 0.0  # modelled, of one epoch of a trial
    fixed_seconds: float = 0.0  # modelled, once per network: the frozen embedding and the refit
    embed_seconds: float = 0.0  # modelled, once per network: the frozen encoders' embedding of the rows they embed
    # the learning rows embedded and learned from, a sample of fit_rows where embedding them all is past EMBED_LIMIT;
    # None: all of them
    learn_sample: int | None = None
    left_out: str | None = None  # why the network is not built: even its sample's embedding is past the limit
    watched_rows: int | None = None  # the stop rows scored after each epoch (tools/fusion.watched_rows)

    @property
    def sampled(self) -> str:
        """The sample, in words for the console; empty without one."""
        if self.learn_sample is None:
            return ""
        return (
            f"a sample of {self.learn_sample} of the {self.fit_rows} fit rows (embedding them all is past "
            f"{EMBED_LIMIT:g} times the budget's network seconds; the stop, validation and test rows are whole)"
        )

    @property
    def model_trials(self) -> int:
        return max(0, self.trials - self.design)

    def affordable(self, epochs_run: list[int]) -> int:
        """The trials the work affords once trials have run `epochs_run` epochs each: early stopping ends most
        trials before their planned epochs, so the modelled work they leave (counted from their epochs, never
        from a clock) pays for further trials, each counted at its most epochs, up to max_trials. At least
        `trials`: the plan's trials always run."""
        spent = self.fixed_seconds + sum(self.trial_setup_seconds + e * self.epoch_seconds for e in epochs_run)
        spent += max(0, len(epochs_run) - self.design) * SUGGEST_S
        n = len(epochs_run)
        while n < self.max_trials:
            more = self.trial_seconds + (SUGGEST_S if n >= self.design else 0.0)
            if spent + more > self.budget_seconds:
                break
            spent, n = spent + more, n + 1
        return max(self.trials, n)

    @property
    def search(self) -> str:
        more = (
            f", more (up to {self.max_trials}) while early stopping leaves the work for them"
            if self.max_trials > self.trials
            else ""
        )
        if self.trials == 1:
            return f"the default configuration alone{more}"
        if self.model_trials == 0:
            return (
                f"random search ({self.trials} trials, the default configuration first: fewer than HEBO's design{more})"
            )
        return (
            f"HEBO ({self.trials} trials: the default configuration, {self.design - 1} random, "
            f"{self.model_trials} suggested by its model{more})"
        )

    def line(self) -> str:
        fit = self.learn_sample or self.fit_rows
        rows = f"{self.epoch_rows} of {fit}" if self.epoch_rows else f"{fit}"
        sampled = f"; learns from {self.sampled}" if self.sampled else ""
        refit = f"; refit on all {self.refit_rows} rows for the best trial's epochs" if self.refit_rows else ""
        within = (
            f"within the budget's {self.budget_seconds:.0f} s"
            if self.seconds <= self.budget_seconds
            else f"OVER the budget's {self.budget_seconds:.0f} s even at the fewest rows per epoch"
        )
        return (
            f"{self.search}, up to {self.epochs} epochs each (patience {self.patience}) on {rows} fit rows per "
            f"epoch, {self.trained}{sampled}{refit}; estimated at most {self.seconds:.0f} s on {self.machine}, {within} "
            f"(safety cap {self.safety_cap:.0f} s per training run)"
        )


def embedding_speed(machine: Machine, modality: str, image_size: int = 64, tiny_image: bool = False) -> float:
    """Modelled samples/s of a frozen encoder's embedding: measured faster than training for text, no faster for
    images."""
    if modality == TEXT.name:
        return MODEL_SPEED["cuda" if machine.cuda else "cpu"]["frozen text"] * (
            1 if machine.cuda else min(max(1, machine.cores), MAX_CORES)
        )
    return training_speed(machine, modality, image_size=image_size, tiny_image=tiny_image)


def training_speed(machine: Machine, modality: str | None, image_size: int = 64, tiny_image: bool = False) -> float:
    """Modelled training samples/s on this machine of a trained image encoder (the tiny CNN when tiny_image) at
    image_size px, a trained text encoder, or (modality None) the fusion MLP on cached features or tabular inputs:
    MODEL_SPEED's figure on one GPU, or per CPU core (up to MAX_CORES) for the encoders, images scaled by the pixel
    count (the MLP's CPU figure is one thread's: its small matrices gain little from more)."""
    device = "cuda" if machine.cuda else "cpu"
    speeds = MODEL_SPEED[device]
    cores = 1 if machine.cuda else min(max(1, machine.cores), MAX_CORES)
    if modality == IMAGE.name:
        if tiny_image and machine.cuda:
            return speeds["tiny image"]
        return speeds["tiny image" if tiny_image else "image"] * cores * (REFERENCE_PX[device] / image_size) ** 2
    if modality == TEXT.name:
        return speeds["text"] * cores
    return speeds["features"]


def plan_network(
    budget: SolveBudget,
    *,
    fit_rows: int,
    val_rows: int,
    test_rows: int,
    modalities: list[str],
    finetune_image: bool,
    finetune_text: bool,
    image_size: int,
    machine: Machine,
    design: int,
    refit: bool,
    stop_rows: int | None = None,
    tiny_image: bool = False,
) -> NetworkPlan:
    """Plans a network's trials, epochs and rows per epoch to fit budget.network_seconds of modelled work (see the
    module's docstring); design is the number of observations HEBO draws at random before its model suggests.
    fit_rows: the rows a trial learns from; val_rows: the rest of the train rows (the stop rows it early-stops on
    and the validation rows); stop_rows: those of them scored after every epoch (default: all val_rows), the others
    and the test rows predicted once per trial; tiny_image: the images go to the tiny CNN (no pretrained weights)
    at image_size px."""
    encoders = {
        m: training_speed(machine, m, image_size=image_size, tiny_image=tiny_image) for m in (IMAGE.name, TEXT.name)
    }
    trained = {
        m: s for m, s in encoders.items() if m in modalities and (finetune_image if m == IMAGE.name else finetune_text)
    }
    frozen = [m for m in encoders if m in modalities and m not in trained]
    # a trained encoder runs on every batch: the slowest part sets the speed; else the MLP on cached features
    train_speed = 1 / sum(1 / s for s in trained.values()) if trained else training_speed(machine, None)
    eval_speed = EVAL_FACTOR * train_speed
    setup = TRIAL_OVERHEAD_S
    # once per network (its later runs reuse the embeddings), the seconds per row of every frozen encoder
    per_row = sum(1 / embedding_speed(machine, m, image_size=image_size, tiny_image=tiny_image) for m in frozen)
    limit = EMBED_LIMIT * budget.network_seconds
    learn, left_out = fit_rows, None  # the fit rows embedded and learned from
    if (fit_rows + val_rows + test_rows) * per_row > limit:
        # past the limit: learn from a sample of the fit rows, the rows that are scored staying whole
        least = min(fit_rows, MIN_SAMPLE)
        learn = max(least, int(limit / per_row) - val_rows - test_rows)
        if learn == least:
            left_out = (
                f"embedding the validation and test rows and {least} fit rows once is modelled at "
                f"{(least + val_rows + test_rows) * per_row:.0f} s, past {EMBED_LIMIT:g} times the {budget.name} "
                f"budget's {budget.network_seconds:.0f} s per network"
            )
    embed = (learn + val_rows + test_rows) * per_row

    watched = val_rows if stop_rows is None else min(stop_rows, val_rows)

    def trial_s(epochs: int, rows: int) -> float:
        once = (val_rows - watched + test_rows) / eval_speed  # the best epoch's predictions
        return setup + once + epochs * (rows / train_speed + watched / eval_speed + EPOCH_OVERHEAD_S)

    def refit_rows(rows: int) -> int:  # an epoch of the refit: every row, or the same sample size as a trial's
        return rows if rows < learn else learn + val_rows

    def fixed_s(epochs: int, rows: int) -> float:  # the embedding and the refit
        return embed + (setup + epochs * refit_rows(rows) / train_speed if refit else 0.0)

    def total_s(trials: int, epochs: int, rows: int) -> float:
        return fixed_s(epochs, rows) + trials * trial_s(epochs, rows) + max(0, trials - design) * SUGGEST_S

    # the embedding is paid once whatever the search: not traded against it. A trained encoder's work grows with the
    # rows it learns from, up to the budget's grown_network_seconds
    work = network_work(budget, learn if trained else 0) + embed

    def search() -> tuple[int, int, int]:  # the most trials, then epochs, then rows per epoch that fit the work
        trials, epochs, rows = budget.n_trials, budget.max_epochs, learn
        while trials > 1 and total_s(trials, epochs, rows) > work:
            trials -= 1
        while epochs > budget.min_epochs and total_s(trials, epochs, rows) > work:
            epochs -= 1
        if total_s(trials, epochs, rows) > work:
            # fewer rows per epoch, but at least a few batches, so that the network still takes steps; below the
            # learning rows even where all of them would fit in a trial, as the refit's epochs then train on that
            # sample size too
            per_epoch_row = epochs * (trials + refit) / train_speed
            rows = int((work - total_s(trials, epochs, 0)) / per_epoch_row)
            rows = max(min(learn, 4 * budget.batch_size), min(learn - 1, rows))
        return trials, epochs, rows

    trials, epochs, rows = search()
    if trained and rows < watched and watched > MIN_WATCHED:
        # scoring the stop rows each epoch cost more than the epoch's training (50,000 images: 6,400 scored, 886
        # trained on): fewer of them, to train on more
        watched = max(MIN_WATCHED, rows)
        trials, epochs, rows = search()
    tiny = {IMAGE.name: f" (the tiny CNN at {image_size}px)"} if tiny_image else {}
    parts = [f"{m} encoder{tiny.get(m, '')} trained at ~{s:.0f} samples/s" for m, s in trained.items()]
    parts += [f"{m} encoder frozen (each row embedded once)" for m in frozen]
    if not trained:
        parts.append(f"the fusion MLP on {'cached features' if frozen else TABULAR.name + ' inputs'}")
    planned_trial = trial_s(epochs, rows)
    return NetworkPlan(
        trials=trials,
        design=design,
        epochs=epochs,
        patience=budget.patience,
        fit_rows=fit_rows,
        val_rows=val_rows,
        epoch_rows=rows if rows < learn else None,
        refit_rows=learn + val_rows if refit else 0,
        trained="; ".join(parts),
        trial_seconds=planned_trial,
        seconds=total_s(trials, epochs, rows),
        budget_seconds=work,
        safety_cap=max(MIN_SAFETY_S, SAFETY * (embed + planned_trial * (1 + val_rows / learn))),
        machine=machine.describe(),
        max_trials=budget.n_trials,
        trial_setup_seconds=trial_s(0, rows),
        epoch_seconds=trial_s(1, rows) - trial_s(0, rows),
        fixed_seconds=fixed_s(epochs, rows),
        embed_seconds=embed,
        learn_sample=learn if learn < fit_rows else None,
        left_out=left_out,
        watched_rows=watched,
    )


def network_work(budget: SolveBudget, trained_rows: int) -> float:
    """Modelled seconds of a network's trials and refit besides its frozen embedding: network_seconds, grown in
    proportion to the fit rows past GROWTH_ROWS when an encoder trains on them (trained_rows > 0), up to the
    budget's grown_network_seconds."""
    if not budget.grown_network_seconds or not trained_rows:
        return budget.network_seconds
    grown = budget.network_seconds * trained_rows / GROWTH_ROWS
    return max(budget.network_seconds, min(budget.grown_network_seconds, grown))


def training_seconds(budget: SolveBudget, fit_rows: int, samples_per_s: float, networks: int | None = None) -> float:
    """The most seconds the budget's networks (all of them, or `networks`) spend in training steps on fit_rows rows
    at samples_per_s, when each runs all its trials for max_epochs epochs (before any planning cuts them)."""
    trial = budget.max_epochs * fit_rows / samples_per_s
    return (len(budget.networks) if networks is None else networks) * budget.n_trials * trial
