"""Budgets counted in work: a network's trials, epochs and rows per epoch are planned from the data and the
machine (never from a clock), fit the budget's modelled seconds, and the plan names a search too short to leave
HEBO's random design a random search."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from agentk.solve.budgets import (
    EMBED_LIMIT,
    GROWTH_ROWS,
    MIN_SAMPLE,
    MIN_WATCHED,
    PRESETS,
    SUGGEST_S,
    Machine,
    plan_network,
)
from tools.fusion import watched_rows
from tools.fusion_config import STOP_ROWS
from tools.hebo_tuner import design

QUICK = PRESETS["quick"]
CPU2 = Machine(cores=2, cuda=False)


def plan(
    budget=QUICK,
    machine=CPU2,
    fit=192,
    val=48,
    test=300,
    modalities=("img",),
    trained=True,
    refit=True,
    stop=None,
    tiny_side=None,
):
    return plan_network(
        budget,
        fit_rows=fit,
        val_rows=val,
        test_rows=test,
        modalities=list(modalities),
        finetune_image=trained,
        finetune_text=False,
        image_size=tiny_side or budget.image_size,
        machine=machine,
        design=design(),
        refit=refit,
        stop_rows=stop,
        tiny_image=tiny_side is not None,
    )


def test_a_cheap_network_gets_hebo_past_its_random_design_and_every_epoch():
    p = plan(trained=False)  # a frozen encoder: the MLP trains on cached features
    assert p.trials == QUICK.n_trials > design() and p.model_trials == QUICK.n_trials - design()
    assert p.epochs == QUICK.max_epochs and p.epoch_rows is None
    assert p.search.startswith("HEBO") and f"{p.model_trials} suggested by its model" in p.search
    assert p.seconds <= QUICK.network_seconds


def test_an_expensive_network_trades_trials_then_epochs_then_rows_and_says_random_search():
    small = plan(trained=True, tiny_side=48)  # the tiny CNN trained on a 2-core CPU
    edge = plan(trained=True)  # resnet18 on 192 images: every fit row fits a trial, but not the refit on all 240 rows
    assert edge.epoch_rows == 191 and edge.seconds <= QUICK.network_seconds  # the refit's epochs are samples too
    assert small.trials < QUICK.n_trials and small.seconds <= QUICK.network_seconds
    assert small.epochs >= QUICK.min_epochs
    two = replace(QUICK, n_trials=2)
    assert plan(two, trained=False).search.startswith("random search")  # 2 trials never leave HEBO's design
    big = plan(replace(QUICK, grown_network_seconds=None), fit=20_000, val=5_000, test=10_000)
    assert big.trials == 1 and big.epochs == QUICK.min_epochs  # the fewest epochs before rows are cut
    assert big.epoch_rows is not None and big.epoch_rows < 20_000
    assert big.epoch_rows == 4 * QUICK.batch_size  # the floor: a few batches; evaluating 5,000 rows still costs
    assert big.seconds > QUICK.network_seconds and "OVER the budget" in big.line()  # said, not hidden
    assert "within the budget" in small.line()
    assert big.refit_rows == 25_000 and plan(refit=False).refit_rows == 0


def test_trials_that_stop_early_leave_their_unspent_work_to_more_trials_within_the_budget():
    """A 16,000 x 200 table planned one trial of 30 epochs at 58 s; early stopping ended it after 6 epochs in 4 s,
    and the network stopped there with 54 s of its work unspent."""
    p = plan(fit=5_000, val=2_500, test=2_500, modalities=("tab",), trained=False)  # a table's MLP, 2 CPU cores
    assert 1 < p.trials < p.max_trials == QUICK.n_trials and p.epochs == QUICK.max_epochs
    assert p.affordable([]) == p.trials and p.affordable([p.epochs] * p.trials) == p.trials  # the plan's own
    short = [2] * p.trials  # each stopped after 2 of its epochs
    more = p.affordable(short)
    assert p.trials < more <= p.max_trials
    # counted from epochs: the done trials as they ran, the further ones at their most epochs, all within the work
    spent = p.fixed_seconds + sum(p.trial_setup_seconds + e * p.epoch_seconds for e in short)
    spent += (more - p.trials) * p.trial_seconds
    spent += max(0, more - p.design) * SUGGEST_S
    assert spent <= p.budget_seconds < spent + p.trial_seconds + SUGGEST_S or more == p.max_trials
    # trials that ran their most epochs pay for none, and the trials run are never taken back
    assert p.affordable([p.epochs] * (p.trials + 1)) == p.trials + 1
    assert "more (up to 6) while early stopping leaves the work for them" in p.line()
    cheap = plan(trained=False)  # already every trial of the budget
    assert cheap.affordable([1]) == cheap.trials == cheap.max_trials
    big = plan(fit=20_000, val=5_000, test=10_000)  # rows were cut to fit one trial: nothing is left for another
    assert big.epoch_rows is not None and big.affordable([1]) == 1


def test_more_cores_or_a_gpu_plan_more_work_and_the_plan_is_a_pure_function_of_data_and_machine():
    rows = {"fit": 2_000, "val": 500, "test": 1_000}
    cpu2, cpu8, gpu = (plan(machine=m, **rows) for m in (CPU2, Machine(8, False), Machine(2, True)))
    work = [(p.trials, p.epochs, p.epoch_rows or p.fit_rows) for p in (cpu2, cpu8, gpu)]
    assert work[0] < work[1] <= work[2] == (QUICK.n_trials, QUICK.max_epochs, 2_000)
    assert plan(machine=CPU2, **rows) == cpu2  # no clock, no load: the same machine plans the same work
    # a safety cap far above the planned seconds of one training run
    assert cpu2.safety_cap >= 5 * cpu2.trial_seconds


def test_a_large_table_learns_from_more_rows_when_a_sample_of_its_stop_rows_is_scored_each_epoch():
    """A million rows on 2 cores: scoring all 160,000 stop rows after each epoch left 128 rows an epoch to learn
    from; scoring STOP_ROWS of them (tools/fusion.watched_rows) leaves over 30,000."""
    table = dict(fit=640_000, val=360_000, test=200_000, modalities=("tab",), trained=False)
    every, sampled = plan(**table), plan(**table, stop=len(watched_rows(np.arange(160_000))))
    assert every.epoch_rows == 4 * QUICK.batch_size and sampled.epoch_rows > 30_000
    assert sampled.seconds <= sampled.budget_seconds < every.seconds


def test_a_trained_encoder_scores_fewer_stop_rows_each_epoch_rather_than_train_on_a_sliver():
    """50,000 images on 2 cores (the tiny CNN at 48 px): scoring 6,400 stop rows after each epoch left 886 rows an
    epoch to train on; the plan scores as many stop rows as it trains on (MIN_WATCHED at least) and trains on
    over four times as many. A network on cached features keeps every stop row it was given."""
    images = dict(fit=25_600, val=14_400, test=10_000, trained=True, tiny_side=48, stop=6_400)
    p = plan(**images)
    assert MIN_WATCHED <= p.watched_rows <= p.epoch_rows < 6_400 and p.epoch_rows > 4 * 886
    assert p.seconds <= p.budget_seconds
    assert plan(**images | {"stop": 1_000}).watched_rows == 1_000  # fewer given: all of them
    assert plan(**images | {"trained": False, "tiny_side": None}).watched_rows == 6_400


def test_watched_stop_rows_are_a_fixed_sample_of_at_most_stop_rows():
    stop = np.arange(0, 3 * STOP_ROWS, 3)
    assert np.array_equal(watched_rows(stop[:100]), stop[:100])
    watched = watched_rows(stop)
    assert len(watched) == STOP_ROWS == len(set(watched)) and set(watched) <= set(stop)
    assert np.array_equal(watched, np.sort(watched)) and np.array_equal(watched, watched_rows(stop))


def test_the_tiny_cnn_is_planned_at_its_own_speed_and_side():
    # 4,000 small images offline (no pretrained weights): the tiny CNN, not resnet18 at 64 px, trains on them
    shape = dict(fit=2560, val=1440, test=1000, stop=640)
    resnet, tiny48, tiny32 = plan(**shape), plan(**shape, tiny_side=48), plan(**shape, tiny_side=32)
    assert resnet.epoch_rows < tiny48.epoch_rows < tiny32.epoch_rows  # more of the rows each epoch, same budget
    assert tiny32.epoch_rows >= 4 * resnet.epoch_rows  # modelled: 400 images/s at 32 px against 70 (resnet18, 64 px)
    assert all(p.seconds <= p.budget_seconds for p in (tiny48, tiny32))
    assert resnet.epoch_rows == 4 * QUICK.batch_size and "OVER the budget" in resnet.line()  # said, not hidden
    assert "tiny CNN at 32px" in tiny32.line() and "tiny CNN" not in resnet.line()


def test_on_a_gpu_the_tiny_cnn_is_planned_at_one_speed_whatever_its_side():
    """Its small batches are bound by per-step overhead on a GPU (benchmarks/model_speed.py on an H200: 70,000-99,000
    images/s at 48 px, 84,000 at 32), so fewer pixels plan no faster epochs there; on a CPU they do."""
    shape = dict(fit=200_000, val=50_000, test=50_000, stop=20_000, budget=PRESETS["standard"])
    gpu = Machine(16, True)
    tiny48, tiny32 = plan(**shape, tiny_side=48, machine=gpu), plan(**shape, tiny_side=32, machine=gpu)
    assert tiny48.epoch_seconds == tiny32.epoch_seconds and tiny48.trained.endswith("60000 samples/s")
    cpu48, cpu32 = plan(**shape, tiny_side=48), plan(**shape, tiny_side=32)
    assert cpu32.epoch_rows > cpu48.epoch_rows


def test_a_frozen_embedding_past_the_limit_learns_from_a_sample_or_is_left_out_with_its_reason():
    """Issue 49: 100,000 texts were planned at 5,283 s for the quick budget, nearly all of it embedding. Past
    EMBED_LIMIT times the budget's network seconds the network embeds a sample of its learning rows, the stop,
    validation and test rows whole; where those alone are past it, the network is left out, in one line."""
    small = plan(fit=1000, val=250, test=500, modalities=("txt",), trained=False)
    assert small.left_out is None and small.learn_sample is None
    limit = EMBED_LIMIT * QUICK.network_seconds
    large = plan(fit=51_200, val=28_800, test=20_000, modalities=("txt",), trained=False)  # 100,000 texts
    assert large.left_out is None and MIN_SAMPLE <= large.learn_sample < 51_200
    assert large.embed_seconds == pytest.approx(limit, rel=0.01)  # the sample fills the limit
    assert large.refit_rows == large.learn_sample + 28_800
    assert f"a sample of {large.learn_sample} of the 51200 fit rows" in large.line()
    assert (
        plan(
            budget=PRESETS["paper"], fit=51_200, val=28_800, test=20_000, modalities=("txt",), trained=False
        ).learn_sample
        is None
    )  # a larger budget embeds every row
    huge = plan(fit=153_600, val=86_400, test=60_000, modalities=("txt",), trained=False)  # 300,000 texts
    assert huge.left_out is not None and "validation and test rows" in huge.left_out and "quick" in huge.left_out
    assert "\n" not in huge.left_out
    trained = plan(fit=51_200, val=28_800, test=20_000, modalities=("img",), trained=True)
    assert trained.learn_sample is None and trained.embed_seconds == 0  # nothing frozen: epochs shrink instead


def test_a_trained_encoders_work_grows_with_its_fit_rows_up_to_the_budgets_most():
    """Issue 49: a fixed 75 s trained the tiny CNN on 128 of 12,800 images an epoch, where a small CNN given the
    solve's time scored far better. A network that trains an encoder gets the budget's network seconds up to
    GROWTH_ROWS fit rows, in proportion past them, up to grown_network_seconds; a frozen encoder's network does not
    grow (its MLP is cheap), nor does a budget without a most."""
    assert plan(fit=2_000, val=500, test=500, tiny_side=48).budget_seconds == QUICK.network_seconds
    assert plan(fit=2 * GROWTH_ROWS, val=500, test=500, tiny_side=48).budget_seconds == 2 * QUICK.network_seconds
    grown = plan(fit=25_600, val=6_400, test=8_000, tiny_side=48)
    assert grown.budget_seconds == QUICK.grown_network_seconds
    fixed = plan(replace(QUICK, grown_network_seconds=None), fit=25_600, val=6_400, test=8_000, tiny_side=48)
    assert grown.epoch_rows > 8 * fixed.epoch_rows and grown.seconds <= QUICK.grown_network_seconds
    frozen = plan(fit=12_800, val=3_200, test=4_000, trained=False)
    assert frozen.budget_seconds == pytest.approx(QUICK.network_seconds + frozen.embed_seconds)
    assert PRESETS["standard"].grown_network_seconds is None
