# Restarts, a budget on average and censored running trials in one Ax loop, and
# what each decision saw, read with decision_table.
import math

from ax import Client, RangeParameterConfig

from botorch_bandits.ax import bandit_generation_strategy, decision_table

client = Client(random_seed=0)
client.configure_experiment(
    name="reading",
    parameters=[
        RangeParameterConfig(name=n, bounds=(0.0, 1.0), parameter_type="float")
        for n in ("x1", "x2")
    ],
)
# f lies in [-1, 1]: its worst value -1 is the censored trials' y_min
client.configure_optimization(objective="f", outcome_constraints=["cost <= 0.4"])
strategy = bandit_generation_strategy(
    restarts=True,  # the objective turns over at trial 24
    long_term_constraints=True,  # the cost's average over the run at most 0.4
    pending="censor",  # running trials enter the model at y_min ...
    y_min=-1.0,
    window=6,  # ... and a value more than 6 trials late stays censored
)
client.set_generation_strategy(strategy)


def evaluate(index: int, p: dict) -> dict:
    sign = 1 if index < 24 else -1  # the best points become the worst
    f = sign * math.sin(3 * p["x1"]) * math.cos(2 * p["x2"])
    return {"f": f, "cost": p["x1"]}


running = []  # three trials in flight; the oldest completes first
for _ in range(40):
    ((index, p),) = client.get_next_trials(max_trials=1).items()
    running.append((index, p))
    if len(running) == 3:
        done, q = running.pop(0)
        client.complete_trial(trial_index=done, raw_data=evaluate(done, q))

table = decision_table(client)  # a row per trial the bandit node made
columns = [
    "t",  # the round
    "cpd_start",  # the first trial the model used (moves at a restart)
    "cpd_test.p_value",  # the change-point test (NaN: too few trials to test)
    "kappa.cost",  # the cost constraint's multiplier (a column per constraint)
    "budget.mean_g.cost",  # the running average of cost - 0.4 (<= 0: within budget)
    "censored",  # running trials in the model at y_min
    "late",  # values that arrived after their window
]
print(table[columns].iloc[4::5].to_string())
fired = table["cpd_test.fired"].eq(True)  # the decisions at which the test fired
print(table.loc[fired, columns].to_string(header=False))
print("restarts began with trials", table["cpd_restarts"].iloc[-1])
