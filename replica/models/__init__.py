"""One module per paper: parameters, symbols, equations, observables."""
