// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// A USD Coin-like token for the sandbox: 6 decimals, minted only by its deployer.
contract TestUSDC is ERC20 {
    address private immutable minter;

    constructor() ERC20("Test USD Coin", "USDC") {
        minter = msg.sender;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == minter, "TestUSDC: only the deployer mints");
        _mint(to, amount);
    }
}
