"""ZeppEplbPolicy: vLLM's EPLB policy contract, computed with Zepp's placement."""

import numpy as np
import pytest

import zepp
from zepp.integrations.vllm import ZeppEplbPolicy


def test_contract_shapes_and_consistency():
    ZeppEplbPolicy.reset()
    rng = np.random.default_rng(5)
    weight = rng.integers(0, 500, size=(3, 16)).astype(np.float32)
    phy2log, log2phy, logcnt = ZeppEplbPolicy.rebalance_experts(weight, 24, 4, 2, 8, maps=True)
    assert phy2log.shape == (3, 24) and logcnt.shape == (3, 16)
    assert log2phy.shape == (3, 16, 24 - 16 + 1)  # vLLM's fixed width: redundant experts + 1
    ref = zepp.rebalance_experts(weight, 24, 4, 2, 8, policy="zepp")
    np.testing.assert_array_equal(phy2log, ref[0])
    np.testing.assert_array_equal(logcnt, ref[2])
    X = ref[1].shape[2]
    np.testing.assert_array_equal(log2phy[:, :, :X], ref[1])
    assert np.all(log2phy[:, :, X:] == -1)
    # vLLM's legacy contract returns phy2log alone; rebalanced from the installed map given.
    ZeppEplbPolicy.reset()
    np.testing.assert_array_equal(ZeppEplbPolicy.rebalance_experts(weight, 24, 4, 2, 8), phy2log)
    np.testing.assert_array_equal(ZeppEplbPolicy.rebalance_experts(weight, 24, 4, 2, 8, phy2log), phy2log)


def test_plan_rebalance_names_a_context_without_its_fields():
    """plan_rebalance(None) raised AttributeError ('NoneType' object has no attribute ...)."""
    with pytest.raises(TypeError, match="^context: expected vLLM's EplbRebalanceContext .*got NoneType without "
                                        "load_window_cpu$"):
        ZeppEplbPolicy().plan_rebalance(None)


def test_classmethod_on_the_class_and_bad_arguments():
    assert isinstance(ZeppEplbPolicy.__dict__["rebalance_experts"], classmethod)
    with pytest.raises(ValueError, match="^num_ranks"):
        ZeppEplbPolicy.rebalance_experts([[1.0] * 8], 12, 1, 3, 4)
    with pytest.raises(ValueError, match="^weight"):
        ZeppEplbPolicy.rebalance_experts([1.0] * 8, 12, 1, 2, 4)


def test_rebalances_from_the_map_it_returned():
    ZeppEplbPolicy.reset()
    rng = np.random.default_rng(9)
    weight = rng.pareto(1.5, size=(4, 64)) * 1000 + 1
    first = ZeppEplbPolicy.rebalance_experts(weight, 96, 1, 4, 16)
    drifted = weight * rng.uniform(0.98, 1.02, size=weight.shape)
    second = ZeppEplbPolicy.rebalance_experts(drifted, 96, 1, 4, 16)
    scratch = zepp.rebalance_experts(drifted, 96, 1, 4, 16, policy="zepp")[0]
    # A +-2% drift moves at most 5% of the slots; a from-scratch placement reshuffles more.
    assert np.sum(second != first) <= 0.05 * first.size
    assert np.sum(second != first) <= np.sum(scratch != first)
    explicit = ZeppEplbPolicy.rebalance_experts(drifted, 96, 1, 4, 16, old_global_expert_indices=first)
    np.testing.assert_array_equal(explicit, second)
    ZeppEplbPolicy.reset()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, 2e15])
def test_a_bad_weight_entry_is_named_by_its_index_as_zepp_rebalance_experts_does(bad):
    """A NaN weight said "weight: expected finite numbers, got NaN or inf" without the index that
    zepp.rebalance_experts gives; both now use the same check (and message)."""
    weight = np.ones((2, 8))
    weight[1, 5] = bad
    with pytest.raises(ValueError) as ours:
        ZeppEplbPolicy.rebalance_experts(weight, 12, 1, 2, 4)
    with pytest.raises(ValueError) as reference:
        zepp.rebalance_experts(weight, 12, 1, 2, 4, policy="zepp")
    assert str(ours.value) == str(reference.value) == f"weight[1, 5]: expected a load in [0, 1e15], got {bad!r}"
